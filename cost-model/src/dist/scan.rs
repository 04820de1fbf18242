//! The scan prices (σ_s long, short): a scan seeks into every run it meets (its data block, and the index block
//! of a cold run) and reads its share of the s entries from each run sequentially.

use crate::dist::latest::SimLevel;
use crate::dist::met::MetTree;
use crate::dist::reference;
use crate::layout::{self, DataShape};
use crate::quirks::ReferenceQuirks;
use cosine_design::{Design, DesignClass, Workload};

/// A design's scan prices: a long scan of the workload's length, a short one (its seeks), and the one the
/// workload's scans are charged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Scans {
    /// σ_s: a scan of the workload's length.
    pub(super) long: f64,
    /// A scan of a few entries: one seek into every run.
    pub(super) short: f64,
    /// What each of the workload's scans costs.
    pub(super) charged: f64,
}

/// The scans of a tree-shaped design: a scan seeks into every run of the tree, or of the planner's simulated
/// levels under the writes where it ran (`simulated`), which hold fewer runs on average than the model's where
/// a level is empty part of its cycle, and reads each run's share of the s keys in sequential blocks.
/// Development seed 3's #11 (T = 2, K = Z = 1, hybrid compaction, YCSB-E at 40,000 keys: levels 1 and 2 empty
/// about half the time) was priced 10.12 blocks a scan over the model's levels, against 7.11 measured; the
/// engine's scans sought its partial levels 3-6 every time, though their files cover part of the key space.
pub(super) fn tree_scans(
    q: &ReferenceQuirks,
    design: &Design,
    workload: &Workload,
    shape: &DataShape,
    met: &MetTree,
    class: DesignClass,
    simulated: Option<&[SimLevel]>,
) -> Scans {
    let tree = &met.tree;
    let l = tree.l;
    if l == 0 {
        return Scans {
            long: 0.0,
            short: 0.0,
            charged: 0.0,
        };
    }
    if q.scan_full_levels {
        return reference::table2_scans(q, design, workload, shape, tree, class, met.filter_bytes);
    }
    let seeks: f64 = match simulated {
        Some(levels) => levels.iter().map(|level| level.seeks).sum(),
        // (over the points of a cycle the mean does not price: a cold run's seek reads its index block)
        None => met
            .weighted()
            .map(|(w, t)| w * (1..=l as usize).map(|i| t.seeks(i)).sum::<f64>())
            .sum(),
    };
    // each run yields its share of the s keys: one seek (plus its index block when cold), then sequential
    // blocks
    let s = workload.scan_length as f64;
    let data: f64 = (1..=l)
        .map(|i| s * layout::data_share(i, l, tree.t) / shape.entries_per_block)
        .sum();
    let long = seeks + data;
    Scans {
        long,
        short: seeks,
        charged: long,
    }
}
