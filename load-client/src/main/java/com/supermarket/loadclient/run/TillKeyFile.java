package com.supermarket.loadclient.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The till keys a run sends ({@code --till-keys}), as {@code scripts/till-keys.sh} writes them:
 * {@code <store or manager> <key> [label]} per line, {@code #} comments. A store's first key is
 * its tills' key; the first manager key signs the {@code /items/top10} queries (and
 * {@code check-gets}' GETs). Each key becomes its header line once, here, so a request only
 * copies bytes. Immutable and thread-safe.
 */
public final class TillKeyFile {

    private final Map<Integer, byte[]> headers;
    private final byte[] managerHeader;
    private final String managerKey;
    private final Path source;

    private TillKeyFile(Map<Integer, byte[]> headers, byte[] managerHeader, String managerKey, Path source) {
        this.headers = Map.copyOf(headers);
        this.managerHeader = managerHeader;
        this.managerKey = managerKey;
        this.source = source;
    }

    public static TillKeyFile read(Path file) throws IOException {
        Map<Integer, byte[]> headers = new HashMap<>();
        byte[] manager = null;
        String managerKey = null;
        List<String> lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\\s+");
            if (fields.length < 2 || !fields[1].chars().allMatch(c -> c > ' ' && c <= '~')) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": expected '<store or manager> <key> [label]'");
            }
            byte[] header = ("\r\nAuthorization: Bearer " + fields[1]).getBytes(StandardCharsets.US_ASCII);
            if (fields[0].equals("manager")) {
                manager = manager == null ? header : manager;
                managerKey = managerKey == null ? fields[1] : managerKey;
            } else {
                try {
                    headers.putIfAbsent(Integer.parseInt(fields[0]), header);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(file + " line " + (i + 1) + ": the scope must be a store id or 'manager'");
                }
            }
        }
        return new TillKeyFile(headers, manager, managerKey, file);
    }

    /** The header line ({@code \r\nAuthorization: Bearer <key>}) of the store's tills. */
    byte[] storeHeader(int store) {
        byte[] header = headers.get(store);
        if (header == null) {
            throw new IllegalArgumentException("no key of store " + store + " in " + source);
        }
        return header;
    }

    /** The header line of the manager key, or null when the file has none. */
    byte[] managerHeader() {
        return managerHeader;
    }

    /** The {@code Authorization} header's value with the manager key ({@code Bearer <key>}), or null when the file has none. */
    public String managerAuthorization() {
        return managerKey == null ? null : "Bearer " + managerKey;
    }

    boolean hasStore(int store) {
        return headers.containsKey(store);
    }
}
