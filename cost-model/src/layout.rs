//! The tree's shape from a design and a data set: entries per block B, buffer entries E_B, levels L, cold
//! levels Y, and the split of memory between fence pointers and filters (MODEL.md §1.1-1.2).

use crate::bloom;
use crate::quirks::ReferenceQuirks;
pub use cosine_design::shape::{data_share, level_count};

/// Bytes a fence pointer takes beyond a key: where its block starts and how long it is, plus the key's
/// offset in the fence array (the engine's `cosine_fence_pointers::FENCE_OVERHEAD_BYTES`), plus the zero byte
/// that makes a fence the smallest key above the previous block (`cosine_fence_pointers::fence_after`).
pub const FENCE_POINTER_BYTES: f64 = 21.0;

/// Everything about the data set the layout needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataShape {
    /// N: entries (a shard's entries, when sharded).
    pub entries: f64,
    /// N_eff: the distinct keys that can exist (sets L in the distribution-aware model).
    pub effective_entries: f64,
    /// E: bytes per entry.
    pub entry_bytes: f64,
    /// F: bytes per fence pointer (the key, plus [`FENCE_POINTER_BYTES`] in the fixed model).
    pub key_bytes: f64,
    /// B: entries per block.
    pub entries_per_block: f64,
}

/// How memory outside the buffer is split between fences and filters, and the resulting cold levels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemorySplit {
    /// Y: levels whose fences stay on disk (no filters).
    pub cold_levels: u32,
    /// M_FP in bytes.
    pub fence_bytes: f64,
    /// M_BF in bytes.
    pub filter_bytes: f64,
}

/// Fence-pointer bytes for the top `h` levels of an `levels`-level tree holding `shape.effective_entries`
/// entries: (F/B)·N·Σ_{i≤h} share_i (the geometric sum over the data actually stored).
pub fn fence_bytes_for_levels(h: u32, levels: u32, t: f64, shape: &DataShape) -> f64 {
    let share: f64 = (1..=h.min(levels)).map(|i| data_share(i, levels, t)).sum();
    shape.key_bytes / shape.entries_per_block * shape.effective_entries * share
}

/// Y for a given fence budget: the fewest cold levels such that the hot levels' fences fit in `fence_bytes`.
pub fn cold_levels_for_fences(fence_bytes: f64, levels: u32, t: f64, shape: &DataShape) -> u32 {
    for y in 0..=levels {
        if fence_bytes_for_levels(levels - y, levels, t, shape)
            <= fence_bytes * (1.0 + 1e-12) + 1e-9
        {
            return y;
        }
    }
    levels
}

/// Splits `memory_bytes` (M − M_B) between fences and filters.
///
/// Fixed model ("fences first", MODEL.md §1.2 \[R\]): Y is the fewest cold levels whose hot fences fit, the
/// fences take exactly that, and filters get the rest. With `fence_sum_bug`, the reference code's split:
/// M_F raised to M_F,LO, Y = 0 above M_F,HI = N(X/(8T) + F/B), else the smallest Y in [1, L−1] with
/// M_F,LO·(1+T)^{L−Y−1} ≤ M_F, else Y = L−1; filters get M_F − M_FP − 2.
#[allow(clippy::too_many_arguments)]
pub fn memory_split(
    memory_bytes: f64,
    buffer_bytes: f64,
    t: f64,
    k: f64,
    z: f64,
    levels: u32,
    shape: &DataShape,
    quirks: &ReferenceQuirks,
) -> MemorySplit {
    if !quirks.fence_sum_bug {
        let y = cold_levels_for_fences(memory_bytes, levels, t, shape);
        let fences = fence_bytes_for_levels(levels - y, levels, t, shape);
        return MemorySplit {
            cold_levels: y,
            fence_bytes: fences,
            filter_bytes: (memory_bytes - fences).max(0.0),
        };
    }
    let (n, e, f, b) = (
        shape.entries,
        shape.entry_bytes,
        shape.key_bytes,
        shape.entries_per_block,
    );
    let m_f_lo = (n * f / b).min(buffer_bytes * f * t / (b * e));
    let x = bloom::memory_threshold(t, k, z);
    let m_f_hi = n * (x / (8.0 * t) + f / b);
    let m_f = memory_bytes.max(m_f_lo);
    let (y, m_fp) = if m_f >= m_f_hi {
        (0, n * f / b)
    } else if m_f > m_f_lo {
        let fences = |h: u32| m_f_lo * (1.0 + t).powi(h as i32 - 1);
        let mut chosen = (levels.saturating_sub(1), m_f_lo);
        for y in 1..levels {
            if fences(levels - y) <= m_f {
                chosen = (y, fences(levels - y));
                break;
            }
        }
        chosen
    } else {
        (levels.saturating_sub(1), m_f_lo)
    };
    MemorySplit {
        cold_levels: y,
        fence_bytes: m_fp,
        filter_bytes: (m_f - m_fp - 2.0).max(0.0),
    }
}

/// Bytes per key of our engine's in-memory hash index for LSH designs: a 32-bit tag and a 32-bit block number
/// in flat sorted arrays (`cosine_fence_pointers::HASH_INDEX_BYTES_PER_KEY`, its real heap bytes), plus 16
/// bytes per block for the block handles.
pub const HASH_INDEX_BYTES_PER_KEY: f64 = 8.0;

/// Memory of our engine's LSH hash index: one entry per key and a handle per block, with 10% for the older
/// versions that runs not yet merged still index.
pub fn engine_hash_index_bytes(entries: f64, entries_per_block: f64) -> f64 {
    1.1 * entries * (HASH_INDEX_BYTES_PER_KEY + 16.0 / entries_per_block.max(1.0))
}

/// Memory of an LSH (FASTER-like) hash index covering N/8 keys: M_FP = (N/8)·F·(1 + 1/B) (MODEL.md §2.8): the
/// paper's sizing, checked against its figure. The search's FASTER baseline holds an index of every key in memory
/// instead (FASTER's index never spills to disk), as [`engine_hash_index_bytes`] sizes it.
pub fn lsh_index_bytes(entries: f64, key_bytes: f64, entries_per_block: f64) -> f64 {
    entries / 8.0 * key_bytes * (1.0 + 1.0 / entries_per_block)
}

/// Memory a RocksDB-like design needs besides its buffer: (filters at `bits_per_key`, fences for every block)
/// in bytes (MODEL.md §7).
pub fn lsm_index_bytes(
    entries: f64,
    key_bytes: f64,
    entries_per_block: f64,
    bits_per_key: f64,
) -> (f64, f64) {
    (
        entries * bits_per_key / 8.0,
        entries * key_bytes / entries_per_block,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    #[test]
    fn paper_memory_figures() {
        // MODEL.md §10.1: FASTER's index for 10^12 keys of 64 B with B = 2048 is 8.0039e12 B = 7,454.2 GiB
        let m = lsh_index_bytes(1e12, 64.0, 2048.0);
        assert!((m / 1e12 - 8.0039).abs() < 1e-4, "{m}");
        assert!((m / GIB - 7454.2).abs() < 0.05);
        // RocksDB at 10 bits/key: filters 1,164.15 GiB, fences 29.10 GiB
        let (filters, fences) = lsm_index_bytes(1e12, 64.0, 2048.0, 10.0);
        assert!((filters / GIB - 1164.15).abs() < 0.005);
        assert!((fences / GIB - 29.10).abs() < 0.005);
    }

    fn shape() -> DataShape {
        DataShape {
            entries: 1e9,
            effective_entries: 1e9,
            entry_bytes: 128.0,
            key_bytes: 16.0,
            entries_per_block: 32.0,
        }
    }

    #[test]
    fn levels_grow_by_t() {
        assert_eq!(level_count(1e6, 100.0, 1e8, 10.0), 0);
        assert_eq!(level_count(1e7, 100.0, 1e8, 10.0), 1);
        assert_eq!(level_count(1e8, 100.0, 1e8, 10.0), 2);
        assert_eq!(level_count(1.0001e8, 100.0, 1e8, 10.0), 3);
    }

    #[test]
    fn shares_add_up() {
        for (l, t) in [(1, 10.0), (5, 3.0), (40, 2.0), (3, 1e6)] {
            let s: f64 = (1..=l).map(|i| data_share(i, l, t)).sum();
            assert!((s - 1.0).abs() < 1e-9, "L={l} T={t}: {s}");
        }
    }

    #[test]
    fn fences_first_split() {
        let s = shape();
        let all = fence_bytes_for_levels(4, 4, 10.0, &s);
        assert!((all - 1e9 * 16.0 / 32.0).abs() < 1e-3);
        let split = memory_split(
            all * 2.0,
            1e8,
            10.0,
            1.0,
            1.0,
            4,
            &s,
            &ReferenceQuirks::NONE,
        );
        assert_eq!(split.cold_levels, 0);
        assert!((split.filter_bytes - all).abs() < 1e-3);
        let split = memory_split(
            all * 0.5,
            1e8,
            10.0,
            1.0,
            1.0,
            4,
            &s,
            &ReferenceQuirks::NONE,
        );
        assert_eq!(split.cold_levels, 1);
        assert_eq!(cold_levels_for_fences(0.0, 4, 10.0, &s), 4);
    }
}
