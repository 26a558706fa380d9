package com.supermarket.store.durability;

import java.nio.file.Path;

/**
 * A file of the durable state fails verification, so the counts cannot be recovered exactly
 * from it: startup stops rather than serve counts that may be wrong. The message names the
 * file, the problem and what an operator can do.
 */
public final class CorruptStateException extends IllegalStateException {

    private final transient Path file;
    private final String problem;

    CorruptStateException(Path file, String problem, String whatToDo) {
        super(file + " is corrupt: " + problem + (whatToDo.isEmpty() ? "" : ". " + whatToDo));
        this.file = file;
        this.problem = problem;
    }

    /** The file that failed verification. */
    public Path file() {
        return file;
    }

    /** The same problem with advice on what to do about it. */
    CorruptStateException advising(String whatToDo) {
        return new CorruptStateException(file, problem, whatToDo);
    }
}
