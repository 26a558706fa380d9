package com.supermarket.contract;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Routing keys that an {@value Topology#SHARDING_EXCHANGE_TYPE} exchange sends to chosen queues:
 * for {@code n} bound queues, one key per queue, so that publishing with every key reaches every
 * queue.
 *
 * <p>The exchange (the {@code rabbitmq_sharding} plugin's
 * {@code rabbit_sharding_exchange_type_modulus_hash}) sends a message to the bound queue at index
 * {@code erlang:phash2(RoutingKeys, 2^27) rem n}, {@code RoutingKeys} being the message's list of
 * routing keys ({@code [Key]} without a CC header). Java has no {@code phash2}, but it is Erlang's
 * portable hash, the same on every machine and runtime version, so Erlang computed it once for
 * the candidate keys {@code s0, s1, ...} ({@code modulus-hash-keys.txt}, written by
 * {@code scripts/modulus-hash-keys.sh}); the key of index {@code i} of {@code n} is the first
 * candidate whose hash leaves {@code i} modulo {@code n}. Which queue an index names is the
 * broker's order of the exchange's bindings; the keys of one {@code n} land on {@code n} different
 * queues whatever that order is (BrokerTopologyIT checks it on the broker).
 *
 * <p>Stateless apart from a cache of computed key lists; thread-safe.
 */
public final class ModulusHashKeys {

    private static final String TABLE = "modulus-hash-keys.txt";
    private static final String[] CANDIDATES;
    private static final int[] HASHES;

    /** Every queue count up to this has a key for each of its queues. */
    public static final int MAX_QUEUES;

    private static final ConcurrentHashMap<Integer, List<String>> KEYS = new ConcurrentHashMap<>();

    static {
        List<String> keys = new ArrayList<>();
        List<Integer> hashes = new ArrayList<>();
        try (InputStream in = ModulusHashKeys.class.getResourceAsStream(TABLE)) {
            if (in == null) {
                throw new IllegalStateException(TABLE + " is missing from the classpath");
            }
            BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    String[] fields = line.trim().split(" ");
                    keys.add(fields[0]);
                    hashes.add(Integer.parseInt(fields[1]));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + TABLE, e);
        }
        CANDIDATES = keys.toArray(String[]::new);
        HASHES = hashes.stream().mapToInt(Integer::intValue).toArray();
        int covered = 0;
        while (Arrays.stream(indexKeys(covered + 1)).allMatch(Objects::nonNull)) {
            covered++;
        }
        MAX_QUEUES = covered;
    }

    private ModulusHashKeys() {
    }

    /**
     * The routing keys for {@code queues} queues bound to the exchange, in the order of the
     * indexes they reach: {@code queues} keys, each landing on another queue, up to
     * {@link #MAX_QUEUES}; beyond it only the indexes the table reaches have a key, so fewer
     * keys than queues (each still on a queue of its own).
     */
    public static List<String> forQueues(int queues) {
        if (queues < 1) {
            throw new IllegalArgumentException("queues must be at least 1: " + queues);
        }
        return KEYS.computeIfAbsent(queues, n -> Arrays.stream(indexKeys(n)).filter(Objects::nonNull).toList());
    }

    /** The key of each index of {@code n} queues: the first candidate reaching it, or null if none does. */
    private static String[] indexKeys(int n) {
        String[] byIndex = new String[n];
        int found = 0;
        for (int i = 0; i < CANDIDATES.length && found < n; i++) {
            int index = HASHES[i] % n;
            if (byIndex[index] == null) {
                byIndex[index] = CANDIDATES[i];
                found++;
            }
        }
        return byIndex;
    }
}
