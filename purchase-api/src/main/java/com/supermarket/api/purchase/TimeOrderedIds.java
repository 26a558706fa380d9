package com.supermarket.api.purchase;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Purchase ids as UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits.
 * Ids of later purchases sort after earlier ones, so purchases-service's primary-key inserts land
 * at the end of the index (appends) instead of at random pages, and the id costs a thread-local
 * random draw instead of {@link UUID#randomUUID()}'s {@code SecureRandom}. The ids are unique,
 * not secret: nothing relies on them being unguessable. Stateless and thread-safe.
 */
final class TimeOrderedIds {

    private TimeOrderedIds() {
    }

    /** A new id for a purchase accepted at {@code epochMillis}. */
    static UUID at(long epochMillis) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long mostSignificant = (epochMillis << 16) | 0x7000L | (random.nextLong() & 0x0FFFL);
        long leastSignificant = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(mostSignificant, leastSignificant);
    }
}
