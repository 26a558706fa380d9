package com.supermarket.store.durability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.store.counts.StoreCounts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log and snapshot files as a crash or a bad disk leaves them, and what recovery makes of them. */
class RecoveryTest {

    private static final int STORES = 6;
    private static final int ITEMS = 40;

    @TempDir
    Path dir;

    private final Random random = new Random(11);

    @Test
    void recoversEveryRecordOfACleanLog() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        List<List<Purchase>> records = records(50);
        writeLog(state, 0, records);

        StoreCounts recovered = counts();
        Recovery.Result result = Recovery.recover(state, recovered);

        assertSameCounts(recovered, oracle(records));
        assertThat(result.recordsReplayed()).isEqualTo(50);
        assertThat(result.tornBytesDropped()).isZero();
        assertThat(result.nextSegment()).isEqualTo(1);
    }

    @Test
    void aLogCutAtEveryByteOfItsLastRecordLosesOnlyThatRecord() throws IOException {
        List<List<Purchase>> records = records(20);
        Path original = dir.resolve("original");
        writeLog(new StateDirectory(original), 0, records);
        long size = Files.size(new StateDirectory(original).segment(0));
        long lastRecordLength = LogRecords.encode(records.getLast()).remaining();
        StoreCounts withoutLast = oracle(records.subList(0, records.size() - 1));

        for (long cut = size - lastRecordLength; cut < size; cut++) {
            Path copy = dir.resolve("cut-" + cut);
            StateDirectory state = new StateDirectory(copy);
            Files.createDirectories(copy);
            Files.copy(state(original).segment(0), state.segment(0));
            try (RandomAccessFile file = new RandomAccessFile(state.segment(0).toFile(), "rw")) {
                file.setLength(cut);
            }

            StoreCounts recovered = counts();
            Recovery.Result result = Recovery.recover(state, recovered);

            assertSameCounts(recovered, withoutLast);
            assertThat(result.tornBytesDropped()).as("cut at %d", cut).isEqualTo(cut - (size - lastRecordLength));
            assertThat(Files.size(state.segment(0))).as("torn tail truncated").isEqualTo(size - lastRecordLength);
            // Reopened: the log goes on in a new segment, and recovering again gives the same counts.
            writeLog(state, result.nextSegment(), List.of());
            StoreCounts again = counts();
            assertThat(Recovery.recover(state, again).tornBytesDropped()).isZero();
            assertSameCounts(again, withoutLast);
        }
    }

    @Test
    void aFlippedCrcByteInTheLastRecordDropsThatRecord() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        List<List<Purchase>> records = records(10);
        writeLog(state, 0, records);
        flipByte(state.segment(0), Files.size(state.segment(0)) - 2);

        StoreCounts recovered = counts();
        Recovery.recover(state, recovered);

        assertSameCounts(recovered, oracle(records.subList(0, 9)));
    }

    @Test
    void aDamagedRecordFollowedByValidOnesInTheLastSegmentIsCorruptionNotATornTail() throws IOException {
        List<List<Purchase>> records = records(10);
        long fifth = encodedSize(records.subList(0, 4));
        // A byte of the fifth record's payload, then a byte of its length: either way valid records follow.
        for (long flipped : new long[] {fifth + 10, fifth + 3}) {
            StateDirectory state = new StateDirectory(dir.resolve("flipped-" + flipped));
            writeLog(state, 0, records);
            long size = Files.size(state.segment(0));
            flipByte(state.segment(0), flipped);

            assertThatThrownBy(() -> Recovery.recover(state, counts()))
                    .as("byte %d flipped", flipped)
                    .isInstanceOf(CorruptStateException.class)
                    .hasMessageContaining(state.segment(0).toString())
                    .hasMessageContaining("at byte " + fifth)
                    .hasMessageContaining("valid record")
                    .hasMessageContaining("from a backup");
            assertThat(Files.size(state.segment(0))).as("nothing cut off").isEqualTo(size);
        }
    }

    @Test
    void aDamagedLastRecordOrAZeroFilledEndIsATornTail() throws IOException {
        List<List<Purchase>> records = records(10);
        long last = encodedSize(records.subList(0, 9));

        StateDirectory damagedLast = new StateDirectory(dir.resolve("damaged-last"));
        writeLog(damagedLast, 0, records);
        flipByte(damagedLast.segment(0), last + 12);
        StoreCounts recovered = counts();
        assertThat(Recovery.recover(damagedLast, recovered).tornBytesDropped()).isEqualTo(encodedSize(records.subList(9, 10)));
        assertThat(Files.size(damagedLast.segment(0))).isEqualTo(last);
        assertSameCounts(recovered, oracle(records.subList(0, 9)));

        StateDirectory zeroFilled = new StateDirectory(dir.resolve("zero-filled"));
        writeLog(zeroFilled, 0, records);
        long size = Files.size(zeroFilled.segment(0));
        Files.write(zeroFilled.segment(0), new byte[4096], StandardOpenOption.APPEND);
        StoreCounts whole = counts();
        assertThat(Recovery.recover(zeroFilled, whole).tornBytesDropped()).isEqualTo(4096);
        assertThat(Files.size(zeroFilled.segment(0))).isEqualTo(size);
        assertSameCounts(whole, oracle(records));
    }

    @Test
    void aBadRecordInAnEarlierSegmentFailsStartupNamingTheFile() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        writeLog(state, 0, records(10));
        writeLog(state, 1, records(10));
        flipByte(state.segment(0), 30);

        assertThatThrownBy(() -> Recovery.recover(state, counts()))
                .isInstanceOf(CorruptStateException.class)
                .hasMessageContaining(state.segment(0).toString())
                .hasMessageContaining("CRC mismatch")
                .hasMessageContaining("restore");
    }

    @Test
    void replayIsIdempotent() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        List<List<Purchase>> records = records(30);
        // A redelivered message is logged again: the same purchases twice, far apart.
        List<List<Purchase>> withRedeliveries = new ArrayList<>(records);
        withRedeliveries.add(records.get(3));
        withRedeliveries.add(records.get(17));
        writeLog(state, 0, withRedeliveries);

        StoreCounts first = counts();
        Recovery.recover(state, first);
        StoreCounts second = counts();
        Recovery.recover(state, second);

        assertSameCounts(first, oracle(records));
        assertSameCounts(second, oracle(records));
    }

    @Test
    void aSnapshotPlusTheLogAfterItCountsEachPurchaseOnce() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        List<List<Purchase>> records = records(40);
        writeLog(state, 0, records.subList(0, 25));
        // The snapshot also holds records 25..29, which were applied in memory before the roll
        // but appended after it: they are in segment 1 as well.
        Snapshots.write(state, 1, oracle(records.subList(0, 30)));
        writeLog(state, 1, records.subList(25, 40));

        StoreCounts recovered = counts();
        Recovery.Result result = Recovery.recover(state, recovered);

        assertSameCounts(recovered, oracle(records));
        assertThat(recovered.purchases()).isEqualTo(purchases(records));
        assertThat(result.snapshot()).isEqualTo(1);
        assertThat(result.segmentsReplayed()).isEqualTo(1);
        assertThat(result.purchasesApplied()).isEqualTo(purchases(records.subList(30, 40)));
    }

    @Test
    void aStreamedSnapshotInstalledAsARebuildRecoversTheLiveCopyAndItsBacklogCountsOnce() throws IOException {
        List<List<Purchase>> records = records(40);
        StoreCounts live = oracle(records.subList(0, 30));
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        Snapshots.write(Channels.newChannel(streamed), 0, live, () -> 0);
        StateDirectory state = new StateDirectory(dir);
        writeLog(state, 0, List.of());
        Files.write(state.snapshot(0), streamed.toByteArray());

        StoreCounts rebuilt = counts();
        Recovery.Result result = Recovery.recover(state, rebuilt);
        assertSameCounts(rebuilt, live);
        assertThat(result.snapshot()).isZero();
        assertThat(result.nextSegment()).isEqualTo(1);
        // The rebuilt copy's backlog starts before the live copy's snapshot ends: the carried dedup window skips the overlap.
        for (List<Purchase> record : records.subList(20, 40)) {
            record.forEach(rebuilt::apply);
        }
        assertSameCounts(rebuilt, oracle(records));
        assertThat(rebuilt.purchases()).isEqualTo(purchases(records));
    }

    @Test
    void aCorruptSnapshotFailsStartupSayingWhatToDo() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        List<List<Purchase>> records = records(20);
        writeLog(state, 0, records.subList(0, 10));
        Snapshots.write(state, 1, oracle(records.subList(0, 10)));
        writeLog(state, 1, records.subList(10, 20));
        flipByte(state.snapshot(1), 100);

        assertThatThrownBy(() -> Recovery.recover(state, counts()))
                .isInstanceOf(CorruptStateException.class)
                .hasMessageContaining(state.snapshot(1).toString())
                .hasMessageContaining("CRC mismatch")
                .hasMessageContaining("no earlier snapshot");

        // With an earlier snapshot kept, the message names the way back, and taking it recovers exactly.
        Snapshots.write(state, 0, counts());
        assertThatThrownBy(() -> Recovery.recover(state, counts()))
                .hasMessageContaining("move this file out of")
                .hasMessageContaining(state.snapshot(0).toString());
        Files.move(state.snapshot(1), dir.resolve("moved-aside.snap.bad"));
        StoreCounts recovered = counts();
        Recovery.recover(state, recovered);
        assertSameCounts(recovered, oracle(records));
    }

    @Test
    void aSnapshotWithoutItsTrailerIsIncomplete() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        writeLog(state, 0, List.of());
        Snapshots.write(state, 0, oracle(records(10)));
        long size = Files.size(state.snapshot(0));
        try (RandomAccessFile file = new RandomAccessFile(state.snapshot(0).toFile(), "rw")) {
            file.setLength(size - 16);
        }

        assertThatThrownBy(() -> Recovery.recover(state, counts()))
                .isInstanceOf(CorruptStateException.class)
                .hasMessageContaining(state.snapshot(0).toString())
                .hasMessageContaining("trailer is missing");
    }

    @Test
    void aHalfWrittenSnapshotIsIgnored() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        List<List<Purchase>> records = records(10);
        writeLog(state, 0, records);
        Files.write(state.snapshotInProgress(1), new byte[] {1, 2, 3});

        StoreCounts recovered = counts();
        Recovery.recover(state, recovered);

        assertSameCounts(recovered, oracle(records));
        assertThat(state.snapshotInProgress(1)).doesNotExist();
    }

    @Test
    void aMissingSegmentFailsStartup() throws IOException {
        StateDirectory state = new StateDirectory(dir);
        writeLog(state, 0, records(3));
        writeLog(state, 2, records(3));

        assertThatThrownBy(() -> Recovery.recover(state, counts()))
                .isInstanceOf(CorruptStateException.class)
                .hasMessageContaining(state.segment(1).toString())
                .hasMessageContaining("missing");
    }

    private static StateDirectory state(Path path) {
        return new StateDirectory(path);
    }

    private static void writeLog(StateDirectory state, long segment, List<List<Purchase>> records) throws IOException {
        Files.createDirectories(state.path());
        try (CountsLog log = new CountsLog(state, segment)) {
            for (List<Purchase> record : records) {
                log.append(LogRecords.encode(record));
            }
        }
    }

    private static void flipByte(Path file, long position) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(position);
            int value = raf.read();
            raf.seek(position);
            raf.write(value ^ 0x5A);
        }
    }

    private List<List<Purchase>> records(int count) {
        List<List<Purchase>> records = new ArrayList<>();
        for (int r = 0; r < count; r++) {
            List<Purchase> record = new ArrayList<>();
            for (int p = 1 + random.nextInt(4); p > 0; p--) {
                List<PurchaseItem> items = new ArrayList<>();
                for (int line = 1 + random.nextInt(3); line > 0; line--) {
                    items.add(new PurchaseItem(1 + random.nextInt(ITEMS), 1 + random.nextInt(5)));
                }
                record.add(new Purchase(UUID.randomUUID(), 1 + random.nextInt(STORES), 1, LocalDate.EPOCH, items,
                        Instant.EPOCH));
            }
            records.add(record);
        }
        return records;
    }

    private static long encodedSize(List<List<Purchase>> records) {
        return records.stream().mapToLong(record -> LogRecords.encode(record).remaining()).sum();
    }

    private static long purchases(List<List<Purchase>> records) {
        return records.stream().mapToLong(List::size).sum();
    }

    private static StoreCounts counts() {
        return new StoreCounts(STORES, ITEMS, 1024);
    }

    private static StoreCounts oracle(List<List<Purchase>> records) {
        StoreCounts counts = counts();
        records.stream().flatMap(List::stream).forEach(counts::apply);
        return counts;
    }

    private static void assertSameCounts(StoreCounts actual, StoreCounts expected) {
        for (int store = 1; store <= STORES; store++) {
            for (int item = 1; item <= ITEMS; item++) {
                assertThat(actual.count(store, item)).as("store %d item %d", store, item)
                        .isEqualTo(expected.count(store, item));
            }
        }
    }

}
