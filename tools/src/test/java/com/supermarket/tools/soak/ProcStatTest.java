package com.supermarket.tools.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcStatTest {

    @Test
    void userPlusSystemTicksAfterTheCommandName() {
        assertThat(ProcStat.cpuTicks("4242 (java) S 1 4242 4242 0 -1 4194560 12 0 0 0 150 25 0 0 20 0 40 0 100 0 0"))
                .isEqualTo(175);
    }

    @Test
    void aCommandNameWithSpacesAndParenthesesIsSkippedWhole() {
        assertThat(ProcStat.cpuTicks("7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 0 0")).isEqualTo(7);
    }

    @Test
    void aLineThatIsNotAStatLineIsRefused() {
        assertThatThrownBy(() -> ProcStat.cpuTicks("no parenthesis")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ProcStat.cpuTicks("1 (x) S 1 2")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aGoneProcessHasNoTicks(@TempDir Path proc) throws Exception {
        Files.createDirectories(proc.resolve("5"));
        Files.writeString(proc.resolve("5/stat"), "5 (x) S 1 5 5 0 -1 0 0 0 0 0 8 9 0 0 20 0 1 0 5 0 0\n");

        assertThat(ProcStat.cpuTicks(proc, 5)).hasValue(17);
        assertThat(ProcStat.cpuTicks(proc, 6)).isEmpty();
    }

    @Test
    void thisProcessHasTicks() {
        assertThat(ProcStat.cpuTicks(Path.of("/proc"), ProcessHandle.current().pid())).isPresent();
    }
}
