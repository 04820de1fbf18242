//! The shapes of the design space (T, K, Z; B-tree fanouts), their neighbours, and Table 1's algorithmic
//! defaults per class.

use cosine_design::{
    Compaction, Design, DesignClass, FilePicking, FilterGranularity, LogKind, RunStrategy,
};
use std::hash::Hash;

/// Size ratios searched for LSM-like and hybrid designs.
pub const LSM_SIZE_RATIOS: [u64; 10] = [2, 3, 4, 6, 8, 10, 12, 16, 24, 32];

/// Size ratios (fanouts) searched for B-tree-like designs, kept where T ≤ entries per block.
pub const BTREE_SIZE_RATIOS: [u64; 6] = [4, 8, 16, 32, 64, 128];

/// The algorithmic primitives Table 1 gives each class.
pub fn with_class_defaults(mut d: Design, class: DesignClass) -> Design {
    d.class = Some(class);
    match class {
        DesignClass::Lsm => {
            d.filter_granularity = FilterGranularity::File;
            d.compaction = Compaction::Full;
            d.run_strategy = RunStrategy::First;
            d.file_picking = FilePicking::DenseFp;
            d.merge_threshold = 1.0;
        }
        DesignClass::Btree => {
            d.compaction = Compaction::Partial;
            d.run_strategy = RunStrategy::None;
            d.file_picking = FilePicking::ChooseFirst;
            d.merge_threshold = 0.5;
        }
        DesignClass::Lsh => {
            d.compaction = Compaction::Partial;
            d.run_strategy = RunStrategy::First;
            d.log = LogKind::Hybrid;
            d.filter_granularity = FilterGranularity::Run;
        }
        DesignClass::Hybrid => {
            d.filter_granularity = FilterGranularity::File;
            d.compaction = Compaction::Hybrid;
            d.run_strategy = RunStrategy::Fullest;
            d.file_picking = FilePicking::DenseFp;
            d.merge_threshold = 0.75;
        }
    }
    d
}

/// A shape of the design search: what stays fixed while the buffer share moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// LSM-like or hybrid: size ratio T, K runs per hot level, Z per cold level; the memory beside the buffer
    /// goes to fences first (as many hot levels as fit), then filters.
    Lsm {
        /// T.
        t: u64,
        /// K.
        k: u64,
        /// Z.
        z: u64,
    },
    /// B-tree-like: fanout T, one run per level, no filters; the memory beside the buffer is fences.
    Btree {
        /// T.
        t: u64,
    },
}

/// How a shape's run counts follow from its size ratio: K (or Z) = 1, ⌈T/2⌉ or T − 1.
pub(super) fn runs_pattern(t: u64, runs: u64) -> u8 {
    if runs == 1 {
        0
    } else if runs == t - 1 {
        2
    } else {
        1
    }
}

pub(super) fn runs_of(t: u64, pattern: u8) -> u64 {
    match pattern {
        0 => 1,
        2 => t - 1,
        _ => t.div_ceil(2),
    }
}

impl Shape {
    /// This shape and its neighbours: the shapes of its kind (the same rule for K and Z) at the searched size
    /// ratios two steps either side, an LSM-like shape's other hot-level run counts at its size ratio and one
    /// step either side, and the leveled LSM-like and B-tree-like shapes of one fanout for each other.
    pub fn neighbours(self) -> Vec<Shape> {
        let mut out = vec![self];
        let mut add = |s: Shape| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        // an LSM-like shape of one run a level and a B-tree-like one of the same fanout are the same tree
        // with and without filters
        let twin = |t: u64| -> Option<Shape> {
            BTREE_SIZE_RATIOS.contains(&t).then_some(Shape::Btree { t })
        };
        match self {
            Shape::Lsm { t, k, z } => {
                let (kp, zp) = (runs_pattern(t, k), runs_pattern(t, z));
                if let Some(i) = LSM_SIZE_RATIOS.iter().position(|&r| r == t) {
                    for j in [i.wrapping_sub(2), i.wrapping_sub(1), i, i + 1, i + 2] {
                        let Some(&t2) = LSM_SIZE_RATIOS.get(j) else {
                            continue;
                        };
                        let (k2, z2) = (runs_of(t2, kp), runs_of(t2, zp));
                        if lsm_runs(t2).contains(&(k2, z2)) {
                            add(Shape::Lsm {
                                t: t2,
                                k: k2,
                                z: z2,
                            });
                        }
                        // the other hot-level run counts one ratio either side (the same Z rule)
                        if j + 1 >= i && j <= i + 1 {
                            for (k3, z3) in lsm_runs(t2) {
                                if runs_pattern(t2, z3) == zp {
                                    add(Shape::Lsm {
                                        t: t2,
                                        k: k3,
                                        z: z3,
                                    });
                                }
                            }
                        }
                    }
                }
                if (k, z) == (1, 1) {
                    if let Some(b) = twin(t) {
                        add(b);
                    }
                }
            }
            Shape::Btree { t } => {
                if let Some(i) = BTREE_SIZE_RATIOS.iter().position(|&r| r == t) {
                    for j in [i.wrapping_sub(2), i.wrapping_sub(1), i + 1, i + 2] {
                        if let Some(&t) = BTREE_SIZE_RATIOS.get(j) {
                            add(Shape::Btree { t });
                        }
                    }
                }
                if LSM_SIZE_RATIOS.contains(&t) {
                    add(Shape::Lsm { t, k: 1, z: 1 });
                }
            }
        }
        out
    }

    /// The shapes of the same kind (the same rule for K and Z) at every size ratio from the smallest to the
    /// largest of `shapes`', one step of the searched ratios beyond each end: where a shard between two
    /// searched sizes finds its best size ratio.
    pub fn spanning(shapes: &[Shape]) -> Vec<Shape> {
        let mut out: Vec<Shape> = Vec::new();
        let mut add = |s: Shape| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        let span = |ratios: &[u64], ts: &[u64]| -> Vec<u64> {
            let lo = ts
                .iter()
                .filter_map(|t| ratios.iter().position(|r| r == t))
                .min();
            let hi = ts
                .iter()
                .filter_map(|t| ratios.iter().position(|r| r == t))
                .max();
            match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    ratios[lo.saturating_sub(1)..(hi + 2).min(ratios.len())].to_vec()
                }
                _ => Vec::new(),
            }
        };
        let mut kinds: Vec<(u8, u8)> = Vec::new();
        for s in shapes {
            if let Shape::Lsm { t, k, z } = *s {
                let kind = (runs_pattern(t, k), runs_pattern(t, z));
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
        for (kp, zp) in kinds {
            let ts: Vec<u64> = shapes
                .iter()
                .filter_map(|s| match *s {
                    Shape::Lsm { t, k, z }
                        if (runs_pattern(t, k), runs_pattern(t, z)) == (kp, zp) =>
                    {
                        Some(t)
                    }
                    _ => None,
                })
                .collect();
            for t in span(&LSM_SIZE_RATIOS, &ts) {
                let (k, z) = (runs_of(t, kp), runs_of(t, zp));
                // the searched (K, Z) pairs only (T = 2 has K = Z = 1)
                if lsm_runs(t).contains(&(k, z)) {
                    add(Shape::Lsm { t, k, z });
                }
            }
        }
        let bts: Vec<u64> = shapes
            .iter()
            .filter_map(|s| match *s {
                Shape::Btree { t } => Some(t),
                _ => None,
            })
            .collect();
        for t in span(&BTREE_SIZE_RATIOS, &bts) {
            add(Shape::Btree { t });
        }
        out
    }
}

/// The (K, Z) pairs searched for size ratio T: K in {1, ⌈T/2⌉, T − 1}, Z in {1, T − 1}.
pub(super) fn lsm_runs(t: u64) -> Vec<(u64, u64)> {
    let mut ks = vec![1, t - 1, t.div_ceil(2)];
    ks.sort_unstable();
    ks.dedup();
    let mut zs = vec![1, t - 1];
    zs.dedup();
    ks.iter()
        .flat_map(|&k| zs.iter().map(move |&z| (k, z)))
        .collect()
}

pub(super) fn base_design(
    t: u64,
    k: u64,
    z: u64,
    block: u64,
    m_b: u64,
    m_bf: u64,
    m_fp: u64,
) -> Design {
    Design {
        size_ratio: t,
        hot_runs: k,
        cold_runs: z,
        block_bytes: block,
        buffer_bytes: m_b,
        filter_bytes: m_bf,
        fence_bytes: m_fp,
        // the class is derived when the design is scored (Algorithm 3)
        class: None,
        ..Design::rocksdb_like(m_b, m_bf, m_fp)
    }
}
