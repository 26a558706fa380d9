package com.supermarket.store.durability;

import com.supermarket.store.counts.StoreCounts;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds the counts from the state directory at startup: loads the newest snapshot, replays
 * the log segments from its number on, skipping the records of the snapshot's segment that a
 * store's row was copied after and passing the rest through the dedup window (so a purchase both
 * in the snapshot and in the log, or logged twice, counts once), and cuts a torn tail off the last
 * segment. A torn tail is expected after a crash (that record was never acknowledged, so the
 * broker redelivers it): a damaged record of the last segment with no valid record after it
 * (short, cut off, a bad CRC, zeros). Any other damage, a damaged record followed by a valid one
 * included, stops startup with a {@link CorruptStateException} that names the file, the byte
 * and what an operator can do, and changes no file.
 *
 * <p>Runs once, on one thread, before anything consumes or queries the counts.
 */
final class Recovery {

    private static final Logger log = LoggerFactory.getLogger(Recovery.class);

    /**
     * What recovery found.
     *
     * @param snapshot           the snapshot loaded, or -1 for none
     * @param snapshotMillis     how long loading it took
     * @param segmentsReplayed   log segments replayed
     * @param recordsReplayed    log records replayed
     * @param purchasesApplied   purchases from the log added to the counts (the rest were already in)
     * @param tornBytesDropped   bytes cut off the end of the last segment
     * @param nextSegment        the number the log continues with
     * @param millis             how long it took
     */
    record Result(long snapshot, long snapshotMillis, int segmentsReplayed, long recordsReplayed, long purchasesApplied,
                  long tornBytesDropped, long nextSegment, long millis) {
    }

    private Recovery() {
    }

    static Result recover(StateDirectory directory, StoreCounts counts) throws IOException {
        long started = System.nanoTime();
        directory.prepare();
        List<Long> snapshots = directory.snapshots();
        List<Long> segments = directory.segments();
        long snapshot = snapshots.isEmpty() ? -1 : snapshots.getLast();
        long[] inSnapshot = snapshot >= 0
                ? loadSnapshot(directory, snapshots, counts) : new long[counts.maxStores() + 1];
        long snapshotMillis = (System.nanoTime() - started) / 1_000_000;
        long first = snapshot >= 0 ? snapshot : segments.isEmpty() ? 0 : segments.getFirst();
        List<Long> toReplay = segments.stream().filter(number -> number >= first).toList();
        requireContiguous(directory, snapshot, first, toReplay);
        long records = 0;
        long applied = 0;
        long torn = 0;
        for (long number : toReplay) {
            Path file = directory.segment(number);
            long[] replayed = {0, 0};
            Frames.Scan scan;
            try {
                boolean snapshotted = number == snapshot;
                scan = Frames.scan(file, (payload, start) -> {
                    long end = start + Frames.OVERHEAD + payload.remaining();
                    replayed[0]++;
                    // Only stores whose id is in range reach inSnapshot: replay refuses the others first.
                    replayed[1] += LogRecords.replay(payload, counts,
                            storeId -> snapshotted && counts.isKnownStore(storeId) && end <= inSnapshot[storeId]);
                });
            } catch (IllegalStateException e) {
                throw new IllegalStateException(file + ": " + e.getMessage(), e);
            }
            records += replayed[0];
            applied += replayed[1];
            if (!scan.clean()) {
                if (number != toReplay.getLast()) {
                    throw new CorruptStateException(file, scan.problem(), "Only the last log segment can have a torn "
                            + "end (from a crash); this one was complete and fsynced, so the disk damaged it. The counts "
                            + "cannot be rebuilt exactly: restore " + directory.path() + " from a backup, or move it "
                            + "aside to start with empty counts (everything counted so far is lost)");
                }
                long valid = Frames.nextValidFrame(file, scan.validEnd() + 1);
                if (valid >= 0) {
                    throw new CorruptStateException(file,
                            scan.problem() + ", yet a valid record follows at byte " + valid, "A crash tears only the end of the log, so the disk damaged this record; it and the "
                            + "records after it may have been acknowledged already, so the counts cannot be rebuilt "
                            + "exactly and nothing is cut off. Restore " + directory.path() + " from a backup; or, "
                            + "accepting the loss of every record from byte " + scan.validEnd() + " on, truncate the "
                            + "file to " + scan.validEnd() + " bytes; or move " + directory.path() + " aside to start "
                            + "with empty counts (everything counted so far is lost)");
                }
                torn = scan.fileSize() - scan.validEnd();
                log.warn("Cutting {} bytes off the end of {}: {} (a write the crash interrupted; it was never "
                        + "acknowledged, so the broker redelivers it)", torn, file, scan.problem());
                try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    channel.truncate(scan.validEnd());
                    channel.force(true);
                }
            }
        }
        long next = toReplay.isEmpty() ? first : toReplay.getLast() + 1;
        return new Result(snapshot, snapshotMillis, toReplay.size(), records, applied, torn, next,
                (System.nanoTime() - started) / 1_000_000);
    }

    private static long[] loadSnapshot(StateDirectory directory, List<Long> snapshots, StoreCounts counts)
            throws IOException {
        long newest = snapshots.getLast();
        try {
            return Snapshots.load(directory, newest, counts);
        } catch (CorruptStateException e) {
            String whatToDo = snapshots.size() > 1
                    ? "To recover from the previous snapshot " + directory.snapshot(snapshots.get(snapshots.size() - 2))
                      + " and the log kept since it, move this file out of " + directory.path() + " and start again"
                    : "There is no earlier snapshot: restore " + directory.path() + " from a backup, or move it aside "
                      + "to start with empty counts (everything counted so far is lost)";
            throw e.advising(whatToDo);
        }
    }

    private static void requireContiguous(StateDirectory directory, long snapshot, long first, List<Long> segments) {
        long expected = first;
        for (long number : segments) {
            if (number != expected) {
                throw new CorruptStateException(directory.segment(expected), "it is missing (segments "
                        + segments + " follow " + (snapshot >= 0 ? "snapshot " + snapshot : "no snapshot") + ")",
                        "The counts cannot be rebuilt exactly without it: restore " + directory.path()
                        + " from a backup, or move it aside to start with empty counts (everything counted so far is lost)");
            }
            expected++;
        }
        if (snapshot >= 0 && segments.isEmpty()) {
            throw new CorruptStateException(directory.segment(snapshot), "it is missing (snapshot " + snapshot
                    + " is followed by no log)", "Restore " + directory.path() + " from a backup, or move it aside "
                    + "to start with empty counts (everything counted so far is lost)");
        }
    }
}
