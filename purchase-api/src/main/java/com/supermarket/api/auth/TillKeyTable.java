package com.supermarket.api.auth;

import java.security.MessageDigest;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * One loaded version of the till key hashes file: SHA-256 digest of a key -> whom it belongs to.
 * Immutable and thread-safe; a reload builds a new table and swaps it in whole.
 * <p>
 * The file, one key per line ({@code #} starts a comment):
 * <pre>
 * &lt;scope&gt; &lt;sha-256 of the key, 64 hex digits&gt; [until=&lt;ISO-8601 instant&gt;] [label=&lt;text&gt;]
 * 7        3f7a...   label=till-2                   a key of store 7
 * 7        9b2c...   until=2026-12-01T00:00:00Z     store 7's previous key, valid until then (rotation)
 * manager  12ab...   label=ops                      reads every store's figures, posts nothing
 * </pre>
 * A store may hold several keys (one per till, or old and new during a rotation).
 * <p>
 * The lookup is an open-addressing table over the digest's first 8 bytes (no boxing, no
 * allocation), confirmed by a constant-time comparison of the whole digest.
 */
final class TillKeyTable {

    /** The scope of a manager key: reads any store, posts nothing. */
    static final long MANAGER = -1;

    private static final int DIGEST_BYTES = 32;
    private static final HexFormat HEX = HexFormat.of();

    /**
     * One key.
     *
     * @param scope    the store id, or {@link #MANAGER}
     * @param notAfter epoch milliseconds after which the key is refused ({@link Long#MAX_VALUE}: never)
     * @param label    free text for the refusal log ("" when none); never the key
     */
    record Entry(long scope, long notAfter, String label, byte[] digest) {
        boolean isManager() {
            return scope == MANAGER;
        }

        String describe() {
            String owner = isManager() ? "manager key" : "key of store " + scope;
            return label.isEmpty() ? owner : owner + " (" + label + ")";
        }
    }

    static final TillKeyTable EMPTY = new TillKeyTable(List.of());

    private final long[] prefixes;
    private final Entry[] entries;
    private final int mask;
    private final int size;
    private final int managers;

    private TillKeyTable(List<Entry> list) {
        int capacity = Integer.highestOneBit(Math.max(4, list.size() * 2) - 1) << 1;
        this.prefixes = new long[capacity];
        this.entries = new Entry[capacity];
        this.mask = capacity - 1;
        int managerCount = 0;
        for (Entry entry : list) {
            long prefix = prefix(entry.digest());
            int slot = slot(prefix);
            while (entries[slot] != null) {
                if (MessageDigest.isEqual(entries[slot].digest(), entry.digest())) {
                    throw new IllegalArgumentException("the same key hash is listed twice ("
                            + entries[slot].describe() + " and " + entry.describe() + ")");
                }
                slot = (slot + 1) & mask;
            }
            prefixes[slot] = prefix;
            entries[slot] = entry;
            managerCount += entry.isManager() ? 1 : 0;
        }
        this.size = list.size();
        this.managers = managerCount;
    }

    /**
     * Parses the file's text.
     *
     * @throws IllegalArgumentException naming the line, when any line is malformed (the caller
     *                                  keeps the previous table: a half-written file never
     *                                  replaces a good one)
     */
    static TillKeyTable parse(String text) {
        List<Entry> list = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int comment = line.indexOf('#');
            if (comment >= 0) {
                line = line.substring(0, comment);
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            try {
                list.add(entry(line.split("\\s+")));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        return new TillKeyTable(list);
    }

    private static Entry entry(String[] fields) {
        if (fields.length < 2) {
            throw new IllegalArgumentException("expected '<store id or manager> <sha-256 hex> [until=...] [label=...]'");
        }
        long scope;
        if (fields[0].equals("manager")) {
            scope = MANAGER;
        } else {
            try {
                scope = Long.parseLong(fields[0]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("the scope must be a store id or 'manager': " + fields[0]);
            }
            if (scope < 1) {
                throw new IllegalArgumentException("store ids start at 1: " + fields[0]);
            }
        }
        if (fields[1].length() != DIGEST_BYTES * 2) {
            throw new IllegalArgumentException("the hash must be 64 hex digits (SHA-256), not " + fields[1].length() + " characters");
        }
        byte[] digest;
        try {
            digest = HEX.parseHex(fields[1]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the hash is not hexadecimal");
        }
        long notAfter = Long.MAX_VALUE;
        String label = "";
        for (int f = 2; f < fields.length; f++) {
            if (fields[f].startsWith("until=")) {
                try {
                    notAfter = Instant.parse(fields[f].substring("until=".length())).toEpochMilli();
                } catch (DateTimeParseException e) {
                    throw new IllegalArgumentException("until= needs an ISO-8601 instant such as 2026-12-01T00:00:00Z");
                }
            } else if (fields[f].startsWith("label=")) {
                label = fields[f].substring("label=".length());
            } else {
                throw new IllegalArgumentException("unknown field " + fields[f]);
            }
        }
        return new Entry(scope, notAfter, label, digest);
    }

    /** The entry whose digest equals {@code digest} (32 bytes), or null. No allocation. */
    Entry find(byte[] digest) {
        long prefix = prefix(digest);
        for (int slot = slot(prefix); entries[slot] != null; slot = (slot + 1) & mask) {
            // The prefix only picks the candidate; the whole digest decides, in constant time.
            if (prefixes[slot] == prefix && MessageDigest.isEqual(entries[slot].digest(), digest)) {
                return entries[slot];
            }
        }
        return null;
    }

    int size() {
        return size;
    }

    int managerKeys() {
        return managers;
    }

    private int slot(long prefix) {
        return (int) (prefix ^ (prefix >>> 32)) & mask;
    }

    private static long prefix(byte[] digest) {
        long prefix = 0;
        for (int i = 0; i < 8; i++) {
            prefix = (prefix << 8) | (digest[i] & 0xff);
        }
        return prefix;
    }
}
