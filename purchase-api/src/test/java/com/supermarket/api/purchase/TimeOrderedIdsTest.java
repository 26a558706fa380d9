package com.supermarket.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TimeOrderedIdsTest {

    @Test
    void isAVersion7UuidCarryingItsMillisecond() {
        long millis = 1_609_459_200_123L;

        UUID id = TimeOrderedIds.at(millis);

        assertThat(id.version()).isEqualTo(7);
        assertThat(id.variant()).isEqualTo(2);
        assertThat(id.getMostSignificantBits() >>> 16).isEqualTo(millis);
        assertThat(id.toString()).matches("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    }

    @Test
    void everyIdOfALaterMillisecondSortsAfterAndIdsDoNotRepeat() {
        Set<UUID> ids = new HashSet<>();
        String latestOfPreviousMillisecond = "";
        for (long millis = 1_609_459_200_000L; millis < 1_609_459_200_000L + 1000; millis++) {
            String latest = "";
            for (int i = 0; i < 100; i++) {
                UUID id = TimeOrderedIds.at(millis);
                assertThat(ids.add(id)).as("unique %s", id).isTrue();
                // The canonical text sorts like the bits, so a database orders them alike.
                assertThat(id.toString()).isGreaterThan(latestOfPreviousMillisecond);
                latest = id.toString().compareTo(latest) > 0 ? id.toString() : latest;
            }
            latestOfPreviousMillisecond = latest;
        }
        assertThat(ids).hasSize(100_000);
    }
}
