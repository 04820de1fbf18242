//! The tree's shape, the one source both the engine and the cost model use: how many levels a data set
//! needs, how the data spreads over them, and Monkey's allocation of filter memory to runs (MODEL.md §1.1,
//! §4). The cost model re-exports these (`cosine_cost_model::layout`, `cosine_cost_model::bloom`); the engine
//! and the filter crate call them here, so the layout crates never depend on the cost model.

use std::f64::consts::LN_2;

/// ln(2)^2, the constant in every Bloom-filter formula.
pub const LN2_SQ: f64 = LN_2 * LN_2;

/// The most bits per key a filter gets (FPR ≈ 5·10⁻⁹): Monkey gives a run more when memory is plentiful; the
/// engine caps what it writes there and the cost model what it prices.
pub const MAX_BITS_PER_KEY: f64 = 40.0;

/// FPR of a Bloom filter with `bits_per_entry` bits per key and the optimal number of hash functions:
/// p = e^{−b·ln²2}.
pub fn fpr(bits_per_entry: f64) -> f64 {
    (-bits_per_entry.max(0.0) * LN2_SQ).exp()
}

/// Bits per key needed for a false-positive rate `p`: b = −ln p / ln²2 (0 for p ≥ 1).
pub fn bits_for_fpr(p: f64) -> f64 {
    if p >= 1.0 {
        0.0
    } else {
        -p.ln() / LN2_SQ
    }
}

/// Bytes the heap hands out for a request of `n` bytes: glibc's chunk (the request plus an 8-byte header,
/// rounded up to 16, at least 32); nothing for an empty request, which does not allocate. The engine's write
/// buffer charges its entries by it (`cosine_buffer`), and the cost model counts a flush's entries with it.
pub const fn alloc_bytes(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        let chunk = (n + 8 + 15) & !15;
        if chunk < 32 {
            32
        } else {
            chunk
        }
    }
}

/// Heap bytes of one node of the engine's sorted write buffer besides its key's and value's allocations
/// (`cosine_buffer::SKIPLIST_NODE_BYTES`, which a test there holds equal to this).
pub const SORTED_BUFFER_NODE_BYTES: usize = 96;

/// Bytes the engine's sorted write buffer charges an entry of a `key`-byte key and a `value`-byte value: its
/// node and its key's and value's allocations. A flush of M_B/2 holds M_B/2 over this many entries, not over
/// the key and value bytes alone (for 16-byte keys and 100-byte values, half as many).
pub const fn sorted_buffer_entry_bytes(key: usize, value: usize) -> usize {
    SORTED_BUFFER_NODE_BYTES + alloc_bytes(key) + alloc_bytes(value)
}

/// Bytes a single put of a `key`-byte key and a `value`-byte value takes in the engine's write-ahead log: a
/// record header (12 bytes: checksums and length), the entry's kind, sequence number and the two lengths
/// (17 bytes), the key and the value (`cosine_engine::wal`, whose test holds it to this).
pub const fn log_record_bytes(key: usize, value: usize) -> usize {
    12 + 17 + key + value
}

/// Bytes of the sync mark the engine's log puts before a group of records appended together once an fsync
/// has reached further (a record of its own: a header, a kind byte, the segment's id, the mark's offset and the
/// durable offset; `cosine_engine::wal` holds it to this): what recovery reads to tell damage a crash left
/// from damage to durable records.
pub const LOG_SYNC_MARK_BYTES: usize = 12 + 1 + 3 * 8;

/// Bytes a single put takes in the log at most: its record ([`log_record_bytes`]) and a sync mark before it
/// (one a group of records appended together: a lone writer's every write, whose fsync the next one follows).
pub const fn log_write_bytes(key: usize, value: usize) -> usize {
    log_record_bytes(key, value) + LOG_SYNC_MARK_BYTES
}

/// Bytes of one slot of the engine's hash-log write buffer's table (a std `HashMap` from a key's `Vec` to its
/// version: a sequence number and an optional value `Vec`; `cosine_buffer` holds it to this).
pub const HASH_LOG_SLOT_BYTES: usize = 56;

/// Heap bytes of the hash-log buffer's table when the map reports `capacity`: its buckets (a slot and a
/// control byte each, at most 7/8 of them usable) and a group of trailing control bytes.
pub const fn hash_log_table_bytes(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 7 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    alloc_bytes(buckets * (HASH_LOG_SLOT_BYTES + 1) + 16)
}

/// Distinct entries of a `key`-byte key and a `value`-byte value the engine's hash-log write buffer of
/// `capacity` bytes holds when it reports full (and is flushed): it charges each entry its key's and value's
/// allocations and the table its map holds, whose capacity doubles (3, 7, 14, 28, ... entries), and counts the
/// doubled table before it is made once the map is at its capacity. For 23-byte keys and 1,000-byte values
/// this is about 1,150 bytes an entry, not the 1,023 of the key and value.
pub fn hash_log_flush_entries(capacity: usize, key: usize, value: usize) -> usize {
    let per = (alloc_bytes(key) + alloc_bytes(value)).max(1);
    // entries up to `below` fit the tables before; the map holds up to `cap` in this one
    let (mut below, mut cap) = (0usize, 3usize);
    loop {
        let table = hash_log_table_bytes(cap);
        let n = capacity.saturating_sub(table).div_ceil(per).max(below + 1);
        if n < cap {
            return n;
        }
        if cap * per + table + hash_log_table_bytes(cap * 2 + 1) >= capacity {
            return cap;
        }
        below = cap;
        cap = if cap == 3 { 7 } else { cap * 2 };
    }
}

/// Bytes of an entry's header in a run file's data block besides its key and value: a tombstone flag, the
/// sequence number (8 bytes) and the key's and value's lengths (4 bytes each), as `cosine_levels`' writer
/// lays entries out (a test there holds it to this).
pub const RUN_ENTRY_HEADER_BYTES: usize = 17;

/// Bytes a run file's data blocks take per entry of a `key`-byte key and a `value`-byte value in
/// `block_bytes` blocks, as `cosine_levels`' writer lays them out: each data block a 4-byte entry count, its
/// entries (header, key, value) up to the first that reaches the block size, and a 4-byte checksum. A file is
/// cut once its data blocks reach the file size.
pub fn run_entry_data_bytes(key: usize, value: usize, block_bytes: usize) -> f64 {
    let entry = (RUN_ENTRY_HEADER_BYTES + key + value) as f64;
    entry + 8.0 / entries_per_run_block(key, value, block_bytes)
}

/// Bytes a run file takes per entry: its data blocks' ([`run_entry_data_bytes`]) and its share of its block's
/// on-disk fence (the fence's length, key and 16-byte handle); filter bits left out. A test in `cosine_levels`
/// holds a written file to it. The planner weighs levels by these bytes, so the cost model's simulated load does
/// too.
pub fn run_entry_disk_bytes(key: usize, value: usize, block_bytes: usize) -> f64 {
    run_entry_data_bytes(key, value, block_bytes)
        + (4 + key + 16) as f64 / entries_per_run_block(key, value, block_bytes)
}

/// Fence memory a resident run spends per entry: one fence a data block, over the block's entries. A fence is
/// a key and 20 bytes (a 4-byte start offset and a 16-byte block handle, `cosine_fence_pointers::Fences`); every
/// block's fence but the first is the smallest key above the block before's last, one byte longer than a key.
pub fn run_fence_memory_per_entry(key: usize, value: usize, block_bytes: usize) -> f64 {
    (key + 21) as f64 / entries_per_run_block(key, value, block_bytes)
}

/// Entries a run file's data block holds: up to the first that reaches the block size.
fn entries_per_run_block(key: usize, value: usize, block_bytes: usize) -> f64 {
    let entry = (RUN_ENTRY_HEADER_BYTES + key + value) as f64;
    ((block_bytes.saturating_sub(4)) as f64 / entry)
        .ceil()
        .max(1.0)
}

/// Bytes a run file takes besides its entries' share ([`run_entry_disk_bytes`]): the 84-byte footer, the meta
/// section (counts, sequence numbers and the file's smallest and largest key), the in-memory top index's one
/// fence and the checksums of those sections, for `key`-byte keys (a test in `cosine_levels` holds a written
/// file to it). A flush's run is one or a few files, so at test scale this is a level's last percent, which
/// decides whether it is pushed down.
pub fn run_file_overhead_bytes(key: usize) -> u64 {
    (84 + (48 + 2 * key) + (28 + key) + 8) as u64
}

/// L = ⌈log_T(N·E / M_B)⌉ with the argument clamped to at least 1 (0 levels when the data fits the buffer).
pub fn level_count(entries: f64, entry_bytes: f64, buffer_bytes: f64, t: f64) -> u32 {
    let x = entries * entry_bytes / buffer_bytes;
    if x <= 1.0 {
        return 0;
    }
    // the tiny slack keeps exact powers of T from rounding up a level
    (x.ln() / t.ln() - 1e-9).ceil().max(0.0) as u32
}

/// Share of the data held by level i (1-based) of an L-level tree: T^i / Σ_{j=1}^{L} T^j, i.e. every level
/// filled in proportion to its capacity.
pub fn data_share(i: u32, levels: u32, t: f64) -> f64 {
    if levels == 0 || i == 0 || i > levels {
        return 0.0;
    }
    // T^i / Σ T^j = T^{i−L} (T−1) / (T (1 − T^{−L})), computed without overflow
    let tl = t.powi(-(levels as i32));
    t.powi(i as i32 - levels as i32) * (t - 1.0) / (t * (1.0 - tl))
}

/// One group of equal runs for the allocator: `runs` runs of `entries` keys each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunGroup {
    /// Keys in one run.
    pub entries: f64,
    /// How many such runs.
    pub runs: f64,
}

/// Monkey's optimal allocation, solved exactly: minimise the sum of FPRs over all runs subject to
/// Σ entries·bits = `total_bits`, with every FPR at most 1. The optimum is p_j = min(1, λ·n_j) (FPR
/// proportional to run size; runs too large for the memory get no filter), which covers the low-memory regime
/// without a separate formula. Returns one FPR per group.
pub fn monkey_allocate(groups: &[RunGroup], total_bits: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..groups.len())
        .filter(|&i| groups[i].entries > 0.0 && groups[i].runs > 0.0)
        .collect();
    order.sort_by(|&a, &b| groups[a].entries.total_cmp(&groups[b].entries));
    let mut fprs = vec![1.0; groups.len()];
    if total_bits <= 0.0 {
        return fprs;
    }
    // Filtered set = the `m` smallest groups; shrink m until the largest filtered group has p < 1.
    let mut m = order.len();
    while m > 0 {
        let set = &order[..m];
        let weight: f64 = set
            .iter()
            .map(|&i| groups[i].runs * groups[i].entries)
            .sum();
        let weighted_ln: f64 = set
            .iter()
            .map(|&i| groups[i].runs * groups[i].entries * groups[i].entries.ln())
            .sum();
        let ln_lambda = -(total_bits * LN2_SQ + weighted_ln) / weight;
        let largest = groups[set[m - 1]].entries;
        if ln_lambda + largest.ln() < 0.0 {
            for &i in set {
                fprs[i] = (ln_lambda + groups[i].entries.ln()).exp();
            }
            return fprs;
        }
        m -= 1;
    }
    fprs
}

/// Bits per key for each group under Monkey's allocation (what the engine's filter crate builds with).
pub fn monkey_bits_per_key(groups: &[RunGroup], total_bits: f64) -> Vec<f64> {
    monkey_allocate(groups, total_bits)
        .into_iter()
        .map(bits_for_fpr)
        .collect()
}

/// Bits per key for each level 1..=levels of a tree of size ratio `t` over `entries` entries with K runs per
/// level above the last and Z at the last, given `filter_bytes` of filter memory: Monkey's allocation (FPR
/// proportional to run size) over the levels' nominal shares of the data ([`data_share`]). The engine writes
/// each file's filter with its level's bits, and the cost model prices the same bits. Levels that get no filter
/// have 0.
pub fn bits_per_key_per_level(
    filter_bytes: u64,
    entries: f64,
    levels: u32,
    t: f64,
    k: f64,
    z: f64,
) -> Vec<f64> {
    if levels == 0 || entries <= 0.0 {
        return Vec::new();
    }
    let groups: Vec<RunGroup> = (1..=levels)
        .map(|i| {
            let runs = if i == levels { z } else { k };
            let share = data_share(i, levels, t);
            RunGroup {
                entries: (entries * share / runs).max(1.0),
                runs,
            }
        })
        .collect();
    monkey_bits_per_key(&groups, 8.0 * filter_bytes as f64)
}

/// Sum of FPRs over all runs (R) for an allocation.
pub fn fpr_sum(groups: &[RunGroup], fprs: &[f64]) -> f64 {
    groups.iter().zip(fprs).map(|(g, p)| g.runs * p).sum()
}
