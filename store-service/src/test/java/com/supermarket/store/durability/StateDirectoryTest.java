package com.supermarket.store.durability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.supermarket.contract.StorePartition;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirectoryTest {

    @TempDir
    Path dir;

    @Test
    void aNewDirectoryIsMarkedAsThePartitionsCopyAndTakenAgainByIt() throws Exception {
        StateDirectory state = new StateDirectory(dir.resolve("state"));

        state.claim(new StorePartition(1, 2), 1);
        state.claim(new StorePartition(1, 2), 1);

        assertThat(Files.readString(dir.resolve("state").resolve("partition"))).isEqualTo("1 of 2, copy 1\n");
    }

    @Test
    void anotherPartitionsDirectoryIsRefused() throws Exception {
        StateDirectory state = new StateDirectory(dir);
        state.claim(new StorePartition(1, 2), 0);

        assertThatThrownBy(() -> state.claim(new StorePartition(0, 2), 0))
                .hasMessageContaining("holds the counts of store partition 1 of 2, copy 0, not of this store partition 0 of 2, copy 0");
        assertThatThrownBy(() -> state.claim(new StorePartition(1, 4), 0)).hasMessageContaining("partition 1 of 2");
    }

    @Test
    void anotherCopysDirectoryIsRefused() throws Exception {
        StateDirectory state = new StateDirectory(dir);
        state.claim(new StorePartition(1, 2), 0);

        assertThatThrownBy(() -> state.claim(new StorePartition(1, 2), 1))
                .hasMessageContaining("holds the counts of store partition 1 of 2, copy 0, not of this store partition 1 of 2, copy 1");
    }

    @Test
    void aDirectoryFromBeforePartitionsIsTheOnlyPartitionsFirstCopys() throws Exception {
        StateDirectory state = new StateDirectory(dir);
        Files.createFile(state.segment(0));

        assertThatThrownBy(() -> state.claim(new StorePartition(0, 2), 0)).hasMessageContaining("partition 0 of 1, copy 0");
        assertThatThrownBy(() -> state.claim(new StorePartition(0, 1), 1)).hasMessageContaining("partition 0 of 1, copy 0");
        state.claim(new StorePartition(0, 1), 0);
        assertThat(Files.readString(dir.resolve("partition"))).isEqualTo("0 of 1, copy 0\n");
    }

    @Test
    void aMarkFromBeforeCopiesIsCopyZeros() throws Exception {
        StateDirectory state = new StateDirectory(dir);
        Files.writeString(dir.resolve("partition"), "1 of 2\n");

        assertThatThrownBy(() -> state.claim(new StorePartition(1, 2), 1)).hasMessageContaining("partition 1 of 2, copy 0");
        state.claim(new StorePartition(1, 2), 0);
        assertThat(Files.readString(dir.resolve("partition"))).isEqualTo("1 of 2, copy 0\n");
    }

    @Test
    void onlyASnapshotOrALoggedByteIsState() throws Exception {
        StateDirectory state = new StateDirectory(dir.resolve("state"));
        assertThat(state.hasState()).as("missing").isFalse();
        state.claim(new StorePartition(0, 1), 0);
        Files.createFile(state.segment(0));
        Files.createFile(state.snapshotInProgress(0));
        assertThat(state.hasState()).as("an empty segment and a half-written snapshot").isFalse();

        Files.write(state.segment(0), new byte[] {1});
        assertThat(state.hasState()).as("a logged byte").isTrue();
        Files.write(state.segment(0), new byte[0]);
        Files.createFile(state.snapshot(0));
        assertThat(state.hasState()).as("a snapshot").isTrue();
    }
}
