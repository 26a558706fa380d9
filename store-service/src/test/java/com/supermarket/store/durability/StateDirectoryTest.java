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
    void aNewDirectoryIsMarkedAsThePartitionsAndTakenAgainByIt() throws Exception {
        StateDirectory state = new StateDirectory(dir.resolve("state"));

        state.claim(new StorePartition(1, 2));
        state.claim(new StorePartition(1, 2));

        assertThat(Files.readString(dir.resolve("state").resolve("partition"))).isEqualTo("1 of 2\n");
    }

    @Test
    void anotherPartitionsDirectoryIsRefused() throws Exception {
        StateDirectory state = new StateDirectory(dir);
        state.claim(new StorePartition(1, 2));

        assertThatThrownBy(() -> state.claim(new StorePartition(0, 2)))
                .hasMessageContaining("holds the counts of store partition 1 of 2, not of this store partition 0 of 2");
        assertThatThrownBy(() -> state.claim(new StorePartition(1, 4))).hasMessageContaining("partition 1 of 2");
    }

    @Test
    void aDirectoryFromBeforePartitionsIsTheOnlyPartitionsAndNoOtherOnes() throws Exception {
        StateDirectory state = new StateDirectory(dir);
        Files.createFile(state.segment(0));

        assertThatThrownBy(() -> state.claim(new StorePartition(0, 2))).hasMessageContaining("partition 0 of 1");
        state.claim(new StorePartition(0, 1));
        assertThat(Files.readString(dir.resolve("partition"))).isEqualTo("0 of 1\n");
    }
}
