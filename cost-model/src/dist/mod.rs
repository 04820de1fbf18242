//! Cosine's distribution-aware I/O model (paper Table 2 and Eq. 1; MODEL.md §2).
//!
//! The exact definitions follow the authors' code, with these fixes (each switchable back through
//! [`ReferenceQuirks`]):
//! * **float exponents** in R: K^{1/T} and T^{T/(T−1)} (`integer_exponents`);
//! * **exact Monkey allocation** over the hot runs, so every FPR is at most 1 and the low-memory regime (largest
//!   hot levels unfiltered) falls out of the optimum (`closed_form_fpr`, `unclamped_fpr`);
//! * **fences first with the geometric fence sum**: Y comes from the design's M_FP (`fence_sum_bug`);
//! * **the last level is counted once** in σ_s (`scan_double_count`);
//! * **a long scan seeks once into every run it reads** (the short-scan cost K(L−Y−1) + Z(Y+1)) before its
//!   sequential blocks, MODEL.md §9.6 (`scan_without_seeks`);
//! * no empirical **B-tree ×0.1 read discount** (`btree_discount`);
//! * `entries` is the data set's size: **skew does not shrink N_eff** (`skew_shrinks_entries`);
//! * **LSH lookups conditioned on existence**, mixed over all key partitions (`lsh_unconditioned`).
//!
//! and these, which make the model describe the engine it scores (found with `cosine validate`):
//! * a **steady-state buffer and levels**: half full on average, the buffer empty without writes; read-only
//!   lookups after a uniform load probe the levels compaction merges whole and the level holding the key
//!   (`full_buffer`);
//! * **cold levels hold data** and a cold run's probe reads its index block (`cold_levels_hold_no_data`);
//! * **long scans per run**: one seek (plus the index when cold) and the run's share of s/B (`scan_full_levels`);
//! * **LSH as our hash-indexed runs**: one block per lookup, none per miss, 1/B per write, a scan seeks every run;
//!   the hybrid log's memory as our engine holds it, the mutable region (the write buffer, half full on
//!   average) and the read-only region of the newest flushed records in the rest of M_B, where the authors'
//!   code takes a full tail of 0.9 and 0.1 of it (`lsh_calibrated`);
//! * **"latest" as recency**: the newest inserts are in the buffer and the top levels (`latest_as_zipfian`);
//! * **a fence is its key plus 21 bytes** (block handle, offset, and the byte that makes it the smallest key
//!   above the previous block; `fence_is_key_only`);
//! * **out-of-place updates** without filters too (`in_place_unfiltered_updates`);
//! * a single-run level that **partial compaction** feeds file by file is probed only for the keys it holds
//!   (`partial_levels_span_keys`);
//! * a level is pushed down once it holds the design's **merge threshold** θ of its capacity, so the tree is as
//!   deep as one of θ-sized levels and a level above the last holds θ/2 of its capacity on average
//!   (`merge_threshold_ignored`).
//!
//! Evaluation is O(L·max(K,Z)) per key partition: probabilities of "not in run" are multiplied as prefix and
//! suffix sums of logarithms (stable when α is tiny or exactly 1).

mod flow;
mod latest;
mod lookup;
mod lsh;
mod met;
mod reference;
mod residency;
mod scan;
mod shape;
mod tree;
mod write;

pub use lsh::{LshAges, LshEngine, FASTER_RECORD_HEADER_BYTES, FASTER_SECTOR_BYTES};

use crate::keys::{KeyPart, KeySpace};
use crate::layout::{self, DataShape};
use crate::probes::Probes;
use crate::quirks::ReferenceQuirks;
use crate::{weigh, IoCost, IoModel, ModelError, PerOp};
use cosine_design::{Design, DesignClass, Workload};
use met::MetTree;
use tree::Tree;

/// Empirical constants of the authors' code, kept as named calibration constants (MODEL.md §9.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// LSH append-only log: lookup scale-up (1.8).
    pub lsh_lookup_scale: f64,
    /// LSH append-only log: insert scale-up (1.5).
    pub lsh_insert_scale: f64,
    /// B-tree lookup discount for cached internal nodes (0.1), applied only with the `btree_discount` quirk.
    pub btree_read_discount: f64,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            lsh_lookup_scale: 1.8,
            lsh_insert_scale: 1.5,
            btree_read_discount: 0.1,
        }
    }
}

/// The distribution-aware I/O model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DistributionAware {
    /// Which reference-code quirks to reproduce (none by default).
    pub quirks: ReferenceQuirks,
    /// Empirical constants.
    pub calibration: Calibration,
    /// The engine that runs an LSH design (fixed model): ours, or FASTER for the search's FASTER baseline.
    pub lsh_engine: LshEngine,
    /// The phase of the merge cycles a window of writes is priced at, where the planner's simulation runs:
    /// their mean by default, the simulation's own for a writer that waits for every merge.
    pub write_phase: crate::loaded::WritePhase,
}

impl DistributionAware {
    /// The fixed model.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model with the reference code's arithmetic.
    pub fn reference() -> Self {
        DistributionAware {
            quirks: ReferenceQuirks::ALL,
            ..Self::default()
        }
    }
}

/// One level of the tree the model prices (see [`DistributionAware::explain`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelLevel {
    /// 1-based level.
    pub level: u32,
    /// Whether the level is one of the L − Y hot levels.
    pub hot: bool,
    /// Runs a lookup meets there: the steady state's average, or under writes the simulation's where the
    /// operations run ([`crate::loaded::UnderWrites::runs`]).
    pub runs: f64,
    /// Entries of one of those runs.
    pub entries_per_run: f64,
    /// Runs whose fences (and filters) are in memory.
    pub resident_runs: f64,
    /// False-positive rate of a resident run's filter (1 without filters).
    pub fpr: f64,
}

/// The data shape of a workload for a design's block size.
pub fn data_shape(
    design: &Design,
    workload: &Workload,
    keys: &KeySpace,
    quirks: &ReferenceQuirks,
) -> DataShape {
    let e = workload.entry_bytes() as f64;
    let n = workload.entries as f64;
    DataShape {
        entries: n,
        effective_entries: keys.effective_entries(n, quirks.skew_shrinks_entries),
        entry_bytes: e,
        key_bytes: workload.key_bytes as f64
            + if quirks.fence_is_key_only {
                0.0
            } else {
                layout::FENCE_POINTER_BYTES
            },
        entries_per_block: (design.block_bytes as f64 / e).floor().max(1.0),
    }
}

impl IoModel for DistributionAware {
    fn evaluate(&self, design: &Design, workload: &Workload) -> Result<IoCost, ModelError> {
        workload.validate()?;
        self.evaluate_with_keys(design, workload, &KeySpace::from_workload(workload))
    }
}

impl DistributionAware {
    /// `evaluate` with the workload's key space computed once by the caller (`KeySpace::from_workload`), for
    /// searches that score many designs on one workload. The workload must already be valid.
    pub fn evaluate_with_keys(
        &self,
        design: &Design,
        workload: &Workload,
        keys: &KeySpace,
    ) -> Result<IoCost, ModelError> {
        design.validate()?;
        if design.buffer_bytes < workload.entry_bytes() {
            return Err(ModelError::BufferTooSmall {
                buffer_bytes: design.buffer_bytes,
                entry_bytes: workload.entry_bytes(),
            });
        }
        let shape = data_shape(design, workload, keys, &self.quirks);
        if self.prices_as_lsh(design, &shape) {
            return Ok(self.evaluate_lsh(design, workload, &shape, keys));
        }
        let parts = keys.parts_cow();
        let met = self.met_tree(design, workload, &shape, &parts);
        Ok(self.price_tree(design, workload, keys, &parts, &shape, &met))
    }

    /// The I/Os of each operation on the tree a tree-shaped design holds ([`MetTree`]): a lookup
    /// ([`lookup::tree_lookup`]), a miss, a write ([`write::tree_write`]) and the updates built from them, the
    /// scans ([`scan::tree_scans`]).
    fn price_tree(
        &self,
        design: &Design,
        workload: &Workload,
        keys: &KeySpace,
        parts: &[KeyPart],
        shape: &DataShape,
        met: &MetTree,
    ) -> IoCost {
        let q = &self.quirks;
        let tree = &met.tree;
        let b = shape.entries_per_block;
        let class = met.class(design, b);
        let empty_lookup = lookup::empty_lookup(tree);
        // the simulation's levels under the writes, where it ran (a latest lookup and a scan meet them)
        let simulated = met.simulated_levels(design, q);
        let spans = met.spans(design, q);
        let mut lookup = lookup::tree_lookup(
            design,
            workload,
            parts,
            met,
            &spans,
            simulated.as_deref(),
            q,
        );
        if q.btree_discount && class == DesignClass::Btree {
            lookup *= self.calibration.btree_read_discount;
        }
        let insert = write::tree_write(design, workload, keys, parts, shape, met, q);
        let (blind_update, rmw) = write::updates(q, met.filter_bytes > 0.0, insert, lookup, b);
        let scans = scan::tree_scans(q, design, workload, shape, met, class, simulated.as_deref());
        let per_op = PerOp {
            lookup,
            empty_lookup,
            insert,
            blind_update,
            rmw,
            long_scan: scans.long,
            short_scan: scans.short,
        };
        let per_operation = weigh(workload, &per_op, scans.charged);
        IoCost {
            class,
            levels: tree.l,
            cold_levels: tree.y,
            fpr_sum: tree.fpr_sum,
            filter_bytes: met.filter_bytes,
            fence_bytes: met.fence_bytes,
            per_op,
            scan: scans.charged,
            per_operation,
            total: per_operation * workload.operations as f64,
            probes: met.weighted().fold(Probes::default(), |sum, (w, t)| {
                sum.add_weighted(w, t.probes())
            }),
        }
    }

    /// Whether `design` is priced as an LSH log rather than a tree: the reference code's rule uses the
    /// workload's entries per block; ours is the engine's own (`Design::runs_as_lsh`), so a design is priced as
    /// the shape the engine runs it as.
    fn prices_as_lsh(&self, design: &Design, shape: &DataShape) -> bool {
        if self.quirks.lsh_calibrated {
            design.filter_bytes == 0 && design.size_ratio as f64 > shape.entries_per_block
        } else {
            design.runs_as_lsh()
        }
    }

    /// Writes between two of the biggest merges `workload`'s writes make (those into the deepest level), as
    /// the planner's simulation runs them (None where it does not run, or meets fewer than two): a window of
    /// fewer writes meets that merge or not by where it falls in the cycle, so what it measures swings about
    /// the cycle's mean the model prices. `cosine verify` says how many cycles its timed run holds.
    pub fn write_cycle(
        &self,
        design: &Design,
        workload: &Workload,
    ) -> Result<Option<f64>, ModelError> {
        design.validate()?;
        workload.validate()?;
        let keys = KeySpace::from_workload(workload);
        let shape = data_shape(design, workload, &keys, &self.quirks);
        let under = if self.prices_as_lsh(design, &shape) {
            self.log_under_writes(design, workload, &shape, &keys)
        } else {
            let parts = keys.parts_cow();
            self.met_tree(design, workload, &shape, &parts).under_writes
        };
        Ok(under.and_then(|u| u.cycle_writes))
    }

    /// The levels the model prices `design` as holding under `workload` (a tree-shaped design; an LSH design,
    /// which the model prices as its log's levels, returns `None`): per level its runs, the entries of a run
    /// a lookup meets, how many runs keep their fences in memory, and the false-positive rate of a resident
    /// run's filter. `cosine validate` prints it beside the engine's tree.
    pub fn explain(
        &self,
        design: &Design,
        workload: &Workload,
    ) -> Result<Option<Vec<ModelLevel>>, ModelError> {
        design.validate()?;
        workload.validate()?;
        let keys = KeySpace::from_workload(workload);
        let shape = data_shape(design, workload, &keys, &self.quirks);
        if self.prices_as_lsh(design, &shape) {
            return Ok(None);
        }
        let parts = keys.parts_cow();
        let met = self.met_tree(design, workload, &shape, &parts);
        let tree = &met.tree;
        // (over the points of a cycle the mean does not price, their weighted runs and resident runs)
        let over = |f: &dyn Fn(&Tree) -> f64| met.weighted().map(|(w, t)| w * f(t)).sum::<f64>();
        Ok(Some(
            (1..=tree.l as usize)
                .map(|i| ModelLevel {
                    level: i as u32,
                    hot: i as u32 <= tree.last_hot(),
                    runs: over(&|t| t.runs[i]),
                    entries_per_run: tree.alpha_entries[i],
                    resident_runs: over(&|t| t.resident[i].min(t.runs[i])),
                    fpr: tree.hot_fpr[i],
                })
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests;
