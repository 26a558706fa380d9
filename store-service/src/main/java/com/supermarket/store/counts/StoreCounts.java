package com.supermarket.store.counts;

import com.supermarket.contract.IdRanges;
import com.supermarket.contract.Purchase;
import com.supermarket.contract.PurchaseItem;
import com.supermarket.contract.StoreQueryReply.Ranked;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quantity sold of every item (1..maxItemId) at every store (1..maxStores), with the ids of
 * each store's recent purchases for exactly-once counting.
 *
 * <h2>Layout and memory</h2>
 * Store-major: one {@code int[maxItemId]} row per store, allocated on the store's first purchase.
 * Each row also keeps its store's {@link #LEADERS} leading items, updated as each line is added,
 * so a store's top items up to that many is a copy of them; a larger {@code limit} is one
 * contiguous scan of the row (100,000 ints = 400 KB, streamed by the hardware prefetcher). An
 * item's top stores is {@code maxStores} strided reads of one cell per row (1,024 reads). At the
 * full 100,000 x 1,024 with every store selling, the rows take 1,024 x 400 KB = <b>410 MB</b>,
 * plus each store's dedup window (28 bytes per id: 4,096 ids x 1,024 stores = 117 MB),
 * <b>527 MB</b> in all ({@link #bytesWhenFull}). A store with no sales costs one null reference.
 * Beside the rows, each item's total over every store ({@code long[maxItemId]}, 800 KB), kept
 * up to date as lines are added, so the items sold most over all the stores
 * ({@link #topItems}) is one scan of 100,000 totals rather than of every row.
 * {@code int} cells rather than {@code long} halve the memory; a cell saturates at {@link Integer#MAX_VALUE} instead
 * of wrapping (2.1 billion units of one item at one store, far beyond any real till).
 *
 * <h2>Thread-safety and consistency</h2>
 * Thread-safe, with no global lock. A purchase belongs to one store, so {@link #apply} takes only
 * that store's lock, under which it checks and records the purchase id and adds every line: the
 * check, the counting and the recording are one atomic step, so a concurrent redelivery of the
 * same purchase is either applied first or skipped, never counted twice. Stores are spread over
 * shard queues and consumers, so the per-store locks are rarely contended. A store's leading
 * items are read under its lock (a copy of at most {@link #LEADERS} entries), so they are exact
 * as of the last whole purchase. The scans take no lock: each cell is written and read with
 * opaque (atomic, eventually visible) access, so a scan sees every cell exactly as of some moment
 * during it; a purchase being applied concurrently may be seen in part. An item's total is
 * added to atomically (stores of different locks add to the same item), after the store's cell,
 * under the store's lock: once purchases stop, every total is the sum of its cells.
 *
 * <h2>Dedup horizon</h2>
 * A purchase id may come again long after its first delivery: a till that retries under the same
 * {@code Idempotency-Key} after a lost answer. Each store remembers its last
 * {@code dedupWindowPerStore} ids; the promise is to remember each for {@code dedupHorizon}. A
 * store that sells more than its window within the horizon forgets ids sooner: each such id is
 * counted ({@link #forgottenEarly}) and the first is logged, so the operator raises the window.
 * Ids restored from a snapshot are dated at the restore.
 *
 * <h2>Persistence</h2>
 * {@link #snapshotTo} and {@link #restoreStore} carry counts and dedup window together, store by
 * store under the store's lock, so a saved state is consistent per store; the durability
 * package writes them to snapshots and replays its write-ahead log through {@link #apply}.
 */
public final class StoreCounts {

    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle TOTAL = MethodHandles.arrayElementVarHandle(long[].class);
    private static final Logger log = LoggerFactory.getLogger(StoreCounts.class);
    /** Times of the dedup window are kept as seconds since 2020-01-01 in an int (until 2088). */
    private static final long EPOCH_SECONDS = 1_577_836_800L;

    private static final Comparator<Ranked> MOST_FIRST =
            Comparator.comparingLong(Ranked::quantity).reversed().thenComparingInt(Ranked::id);

    /**
     * How many leading items each store keeps up to date: {@code topItemsAtStore} up to this
     * limit (the API asks 10 by default) copies them instead of scanning the store's row.
     */
    public static final int LEADERS = 32;

    private final int maxStores;
    private final int maxItemId;
    private final IdRanges ranges;
    private final int dedupWindowPerStore;
    private final long dedupHorizonSeconds;
    private final InstantSource clock;
    private final AtomicReferenceArray<StoreRow> rows;
    /** Each item's quantity over every store, index = item id - 1; added to with {@link #TOTAL}. */
    private final long[] itemTotals;
    private final LongAdder forgottenEarly = new LongAdder();
    private final AtomicBoolean warnedOfEarlyForgetting = new AtomicBoolean();

    /** Counts with no dedup horizon promised: ids are remembered as long as the window holds them. */
    public StoreCounts(int maxStores, int maxItemId, int dedupWindowPerStore) {
        this(maxStores, maxItemId, dedupWindowPerStore, Duration.ZERO, InstantSource.system());
    }

    /**
     * @param maxStores           stores are 1..maxStores
     * @param maxItemId           items are 1..maxItemId
     * @param dedupWindowPerStore how many recent purchase ids each store remembers
     * @param dedupHorizon        how long each id should be remembered (see the class comment)
     * @param clock               dates the remembered ids
     */
    public StoreCounts(int maxStores, int maxItemId, int dedupWindowPerStore, Duration dedupHorizon, InstantSource clock) {
        if (maxStores < 1 || maxItemId < 1 || dedupWindowPerStore < 1) {
            throw new IllegalArgumentException("maxStores, maxItemId and dedupWindowPerStore must be positive: "
                    + maxStores + ", " + maxItemId + ", " + dedupWindowPerStore);
        }
        if (dedupHorizon.isNegative()) {
            throw new IllegalArgumentException("dedupHorizon must not be negative: " + dedupHorizon);
        }
        this.maxStores = maxStores;
        this.maxItemId = maxItemId;
        this.ranges = new IdRanges(maxStores, maxItemId);
        this.dedupWindowPerStore = dedupWindowPerStore;
        this.dedupHorizonSeconds = dedupHorizon.toSeconds();
        this.clock = clock;
        this.rows = new AtomicReferenceArray<>(maxStores);
        this.itemTotals = new long[maxItemId];
    }

    /** The heap the counts take once every store has a row: rows plus dedup windows, and the items' totals. */
    public static long bytesWhenFull(int maxStores, int maxItemId, int dedupWindowPerStore) {
        long row = 16L + 4L * maxItemId + 16L + 4L * LEADERS;
        long window = 4 * 16L + 20L * dedupWindowPerStore + 4L * 2 * Integer.highestOneBit(Math.max(1, dedupWindowPerStore * 2 - 1));
        return (long) maxStores * (row + window) + 16L + 8L * maxItemId;
    }

    public int maxStores() {
        return maxStores;
    }

    public int maxItemId() {
        return maxItemId;
    }

    public int dedupWindowPerStore() {
        return dedupWindowPerStore;
    }

    /**
     * How many purchase ids were forgotten sooner than the dedup horizon, since the start: each
     * is a retry that would now be counted again. Zero while every store's window covers its
     * sales within the horizon.
     */
    public long forgottenEarly() {
        return forgottenEarly.sum();
    }

    /** The ranges of the store and item ids these counts hold. */
    public IdRanges ranges() {
        return ranges;
    }

    public boolean isKnownStore(int storeId) {
        return ranges.isKnownStore(storeId);
    }

    public boolean isKnownItem(int itemId) {
        return ranges.isKnownItem(itemId);
    }

    /** What {@link #apply} did with a purchase. */
    public enum Outcome {
        /** Every line was added. */
        APPLIED,
        /** The purchase id was among the store's recent ids: nothing was added. */
        DUPLICATE
    }

    /**
     * Adds every line of {@code purchase} exactly once (see the class comment).
     *
     * @throws IllegalArgumentException if it names a store or item outside {@link #ranges()}, which
     *                                  its caller checks where the purchase came in
     */
    public Outcome apply(Purchase purchase) {
        List<PurchaseItem> items = purchase.items();
        int[] itemIds = new int[items.size()];
        int[] quantities = new int[items.size()];
        for (int i = 0; i < itemIds.length; i++) {
            itemIds[i] = items.get(i).itemId();
            quantities[i] = items.get(i).quantity();
        }
        return apply(purchase.purchaseId(), purchase.storeId(), itemIds, quantities);
    }

    /**
     * Adds {@code quantities[i]} of {@code itemIds[i]} at {@code storeId} exactly once per
     * {@code purchaseId} (see the class comment); the form in which the write-ahead log replays
     * a purchase.
     *
     * @throws IllegalArgumentException if it names a store or item outside {@link #ranges()}, which
     *                                  its caller checks where the purchase came in; nothing is added
     */
    public Outcome apply(UUID purchaseId, int storeId, int[] itemIds, int[] quantities) {
        if (!isKnownStore(storeId) || !Arrays.stream(itemIds).allMatch(this::isKnownItem)) {
            throw new IllegalArgumentException("purchase " + purchaseId + " names store " + storeId + " or an item "
                    + "outside 1.." + maxStores + " stores / 1.." + maxItemId + " items");
        }
        StoreRow row = row(storeId);
        int now = now();
        int forgottenAt;
        synchronized (row) {
            if (!row.recent.add(purchaseId, now)) {
                return Outcome.DUPLICATE;
            }
            forgottenAt = row.recent.forgottenAt();
            row.purchases++;
            for (int i = 0; i < itemIds.length; i++) {
                int index = itemIds[i] - 1;
                TOTAL.getAndAdd(itemTotals, index, (long) row.add(index, quantities[i]));
            }
        }
        if (forgottenAt != RecentIds.NOTHING_FORGOTTEN && now - forgottenAt < dedupHorizonSeconds) {
            forgotEarly(storeId, now - forgottenAt);
        }
        return Outcome.APPLIED;
    }

    private void forgotEarly(int storeId, long rememberedSeconds) {
        forgottenEarly.increment();
        if (warnedOfEarlyForgetting.compareAndSet(false, true)) {
            log.warn("Store {} sells more than its dedup window of {} purchase ids within the dedup horizon of {} s: it"
                    + " forgot a purchase id after {} s, so a retry of that purchase would be counted again. Raise"
                    + " STORE_COUNTS_DEDUP_WINDOW_PER_STORE (28 bytes per id per store); store_dedup_forgotten_early_total counts"
                    + " every id forgotten early", storeId, dedupWindowPerStore, dedupHorizonSeconds, rememberedSeconds);
        }
    }

    private int now() {
        return (int) (clock.millis() / 1000 - EPOCH_SECONDS);
    }

    /**
     * How many distinct purchases the counts hold, over every store (a redelivery is not counted
     * again); restored with the counts, so it is the total since the state directory began.
     * Each store's figure is exact; the sum is a moment's view while purchases are applied.
     */
    public long purchases() {
        long total = 0;
        for (int store = 0; store < maxStores; store++) {
            StoreRow row = rows.get(store);
            if (row != null) {
                total += row.purchases;
            }
        }
        return total;
    }

    /** The quantity of {@code itemId} sold at {@code storeId}. */
    public int count(int storeId, int itemId) {
        requireStore(storeId);
        requireItem(itemId);
        StoreRow row = rows.get(storeId - 1);
        return row == null ? 0 : (int) CELL.getOpaque(row.counts, itemId - 1);
    }

    /**
     * The {@code limit} items sold most at {@code storeId}, most first, ties by lower item id;
     * only items with sales. Up to {@link #LEADERS}, a copy of the store's leading items; beyond,
     * one pass over the store's row.
     */
    public List<Ranked> topItemsAtStore(int storeId, int limit) {
        requireStore(storeId);
        requireLimit(limit);
        StoreRow row = rows.get(storeId - 1);
        if (row == null) {
            return List.of();
        }
        if (limit <= LEADERS) {
            synchronized (row) {
                return row.leaders(limit);
            }
        }
        TopK top = new TopK(limit);
        int[] counts = row.counts;
        long threshold = 0;
        for (int i = 0; i < counts.length; i++) {
            int count = (int) CELL.getOpaque(counts, i);
            if (count > threshold) {
                top.offer(i + 1, count);
                threshold = top.threshold();
            }
        }
        return top.toList();
    }

    /**
     * The {@code limit} stores that sold {@code itemId} most, most first, ties by lower store
     * id; only stores with sales. One read per store.
     */
    public List<Ranked> topStoresForItem(int itemId, int limit) {
        requireItem(itemId);
        TopK top = new TopK(limit); // refuses a limit below 1
        int index = itemId - 1;
        long threshold = 0;
        for (int store = 0; store < maxStores; store++) {
            StoreRow row = rows.get(store);
            if (row != null) {
                int count = (int) CELL.getOpaque(row.counts, index);
                if (count > threshold) {
                    top.offer(store + 1, count);
                    threshold = top.threshold();
                }
            }
        }
        return top.toList();
    }

    /** The quantity of {@code itemId} sold over every store. */
    public long itemTotal(int itemId) {
        requireItem(itemId);
        return (long) TOTAL.getOpaque(itemTotals, itemId - 1);
    }

    /**
     * The {@code limit} items sold most over every store, most first, ties by lower item id; only
     * items with sales. One pass over the items' totals.
     */
    public List<Ranked> topItems(int limit) {
        TopK top = new TopK(limit); // refuses a limit below 1
        long threshold = 0;
        for (int i = 0; i < itemTotals.length; i++) {
            long total = (long) TOTAL.getOpaque(itemTotals, i);
            if (total > threshold) {
                top.offer(i + 1, total);
                threshold = top.threshold();
            }
        }
        return top.toList();
    }

    /**
     * Every item sold at least {@code atLeast} times over every store, most first, ties by lower
     * item id. One pass over the items' totals; as long as the items that qualify.
     */
    public List<Ranked> itemsSoldAtLeast(long atLeast) {
        if (atLeast < 1) {
            throw new IllegalArgumentException("atLeast must be at least 1: " + atLeast);
        }
        List<Ranked> sold = new ArrayList<>();
        for (int i = 0; i < itemTotals.length; i++) {
            long total = (long) TOTAL.getOpaque(itemTotals, i);
            if (total >= atLeast) {
                sold.add(new Ranked(i + 1, total));
            }
        }
        sold.sort(MOST_FIRST);
        return sold;
    }

    /** Hands every store that has a row to {@code sink}, each copied under its store's lock. */
    public void snapshotTo(SnapshotSink sink) {
        snapshotTo(storeId -> { }, sink);
    }

    /**
     * As {@link #snapshotTo(SnapshotSink)}, calling {@code whileLocked} with each store's id just
     * before its row is copied, under the same lock: what it observes (e.g. how far a log of the
     * applied purchases has got) happened before the copy, and no purchase of that store is
     * applied in between.
     */
    public void snapshotTo(IntConsumer whileLocked, SnapshotSink sink) {
        for (int store = 0; store < maxStores; store++) {
            StoreRow row = rows.get(store);
            if (row == null) {
                continue;
            }
            int[] counts;
            List<UUID> recent;
            long purchases;
            synchronized (row) {
                whileLocked.accept(store + 1);
                counts = row.counts.clone();
                recent = row.recent.oldestFirst();
                purchases = row.purchases;
            }
            sink.store(store + 1, counts, purchases, recent);
        }
    }

    /**
     * Replaces one store's state with a saved one; only for loading a snapshot before consumers
     * and queries start.
     *
     * @param itemCounts        quantity per item, index = item id - 1, at most maxItemId long
     * @param purchases         how many purchases the store had counted
     * @param recentPurchaseIds oldest first
     */
    public void restoreStore(int storeId, int[] itemCounts, long purchases, List<UUID> recentPurchaseIds) {
        requireStore(storeId);
        if (itemCounts.length > maxItemId) {
            throw new IllegalArgumentException("snapshot of store " + storeId + " has " + itemCounts.length
                    + " items, more than maxItemId " + maxItemId);
        }
        StoreRow row = row(storeId);
        synchronized (row) {
            for (int index = 0; index < maxItemId; index++) {
                int count = index < itemCounts.length ? itemCounts[index] : 0;
                if (count != row.counts[index]) {
                    TOTAL.getAndAdd(itemTotals, index, (long) count - row.counts[index]);
                }
            }
            // A plain copy: restoring happens before consumers and queries start, and starting
            // them happens-after it.
            System.arraycopy(itemCounts, 0, row.counts, 0, itemCounts.length);
            Arrays.fill(row.counts, itemCounts.length, maxItemId, 0);
            row.electLeaders();
            int now = now();
            for (UUID id : recentPurchaseIds) {
                row.recent.add(id, now);
            }
            row.purchases = purchases;
        }
    }

    private StoreRow row(int storeId) {
        StoreRow row = rows.get(storeId - 1);
        if (row == null) {
            StoreRow fresh = new StoreRow(maxItemId, dedupWindowPerStore);
            row = rows.compareAndExchange(storeId - 1, null, fresh);
            if (row == null) {
                row = fresh;
            }
        }
        return row;
    }

    private void requireStore(int storeId) {
        if (!isKnownStore(storeId)) {
            throw new IllegalArgumentException("store " + storeId + " outside 1.." + maxStores);
        }
    }

    private static void requireLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1: " + limit);
        }
    }

    private void requireItem(int itemId) {
        if (!isKnownItem(itemId)) {
            throw new IllegalArgumentException("item " + itemId + " outside 1.." + maxItemId);
        }
    }

    /**
     * One store's counts, leading items and recent purchase ids; all guarded by the row's monitor
     * for writes, the leading items for reads too.
     */
    private static final class StoreRow {
        final int[] counts;
        final RecentIds recent;
        /**
         * The indexes of the store's most sold items, most first, ties by lower index: the
         * {@code leaderCount} greatest of all items with sales in that order. A count only grows,
         * so an item's rank only rises and no other item's changes: keeping this exact takes,
         * per added line, at most moving that one item up, entering it in place of the last.
         */
        final int[] leaders = new int[LEADERS];
        int leaderCount;
        /** Purchases applied to this store; written under the monitor, read without it. */
        volatile long purchases;

        StoreRow(int maxItemId, int dedupWindow) {
            counts = new int[maxItemId];
            recent = new RecentIds(dedupWindow);
        }

        /**
         * Caller holds the row's monitor, so read-add-write needs no atomic instruction. Returns
         * what was added: {@code quantity}, less once the cell saturates.
         */
        int add(int index, int quantity) {
            int before = counts[index];
            int count = (int) Math.min((long) before + quantity, Integer.MAX_VALUE);
            CELL.setOpaque(counts, index, count);
            promote(index, count);
            return count - before;
        }

        /** Caller holds the monitor: the item at {@code index} has just reached {@code count}. */
        private void promote(int index, int count) {
            // Every leader counts at least as much as the last one: a smaller count is not a
            // leader's and cannot enter, which settles most lines with one comparison.
            if (count <= 0 || leaderCount == LEADERS && count < counts[leaders[LEADERS - 1]]) {
                return;
            }
            int position = leaderCount - 1;
            while (position >= 0 && leaders[position] != index) {
                position--;
            }
            if (position < 0) {
                if (leaderCount < LEADERS) {
                    position = leaderCount++;
                } else if (ranksBefore(index, count, leaders[LEADERS - 1])) {
                    position = LEADERS - 1;
                } else {
                    return;
                }
            }
            while (position > 0 && ranksBefore(index, count, leaders[position - 1])) {
                leaders[position] = leaders[position - 1];
                position--;
            }
            leaders[position] = index;
        }

        private boolean ranksBefore(int index, int count, int other) {
            int otherCount = counts[other];
            return count > otherCount || (count == otherCount && index < other);
        }

        /** Caller holds the monitor: chooses the leaders afresh from the counts, as if each grew from 0. */
        void electLeaders() {
            leaderCount = 0;
            for (int index = 0; index < counts.length; index++) {
                promote(index, counts[index]);
            }
        }

        /** Caller holds the monitor. */
        List<Ranked> leaders(int limit) {
            Ranked[] ranking = new Ranked[Math.min(limit, leaderCount)];
            for (int i = 0; i < ranking.length; i++) {
                ranking[i] = new Ranked(leaders[i] + 1, counts[leaders[i]]);
            }
            return List.of(ranking);
        }
    }
}
