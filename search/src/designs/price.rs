//! Pricing one design on a shard: the I/O model (with Endure's KL worst case under ρ), the class it derives
//! and the algorithmic choices it runs with, and its time on the VM.

use crate::designs::memo::{EvalKey, GridKey, Priced};
use crate::designs::shapes::with_class_defaults;
use crate::designs::{Scored, Shard, CPU_OPS_PER_CORE};
use cosine_cost_model::cpu::speedup;
use cosine_cost_model::layout::{self, DataShape};
use cosine_cost_model::DistributionAware;
use cosine_design::{Design, DesignClass};

/// The algorithmic choices a design the search built (no class recorded) runs with once the model has derived
/// its class: those it was built with (a leveled LSM-tree's: full merges, a level pushed down when full), or
/// those Table 1 gives its class ([`with_class_defaults`]). The search prices both and keeps the faster; for
/// an LSM-class design they are the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Choices {
    Built,
    Table1,
}

/// `design` with the `class` the model derived recorded and the algorithmic `choices` it runs with: the design
/// the search hands out, as the model priced it.
pub(super) fn runs_as(mut design: Design, class: DesignClass, choices: Choices) -> Design {
    match choices {
        Choices::Built => {
            design.class = Some(class);
            design
        }
        Choices::Table1 => with_class_defaults(design, class),
    }
}

/// Relative difference below which two prices of one design count as equal (the model's sums taken in another
/// order differ in their last bits).
pub(super) const TIE: f64 = 1e-12;

impl Shard<'_> {
    pub(super) fn shape(&self) -> DataShape {
        let w = &self.workload;
        let e = w.entry_bytes() as f64;
        DataShape {
            entries: w.entries as f64,
            effective_entries: self.keys.effective_entries(w.entries as f64, false),
            entry_bytes: e,
            key_bytes: w.key_bytes as f64 + layout::FENCE_POINTER_BYTES,
            entries_per_block: (self.block_bytes as f64 / e).floor().max(1.0),
        }
    }

    /// Scores one design; None when the model rejects it.
    pub fn score(&self, design: Design) -> Option<Scored> {
        let (io, class, choices) = self.io_and_class(&design)?;
        Some(self.scored(design, io, class, choices))
    }

    /// A design with its I/Os per operation, class and algorithmic choices, timed on this VM.
    pub(super) fn scored(
        &self,
        design: Design,
        io: f64,
        class: DesignClass,
        choices: Choices,
    ) -> Scored {
        let phi = self
            .system_phi
            .unwrap_or_else(|| self.phi.class(class))
            .workload_phi(&self.workload.mix);
        let latency = self.latency(io, class);
        Scored {
            design: runs_as(design, class, choices),
            class,
            io_per_op: io,
            phi,
            latency_s: latency,
            template: None,
        }
    }

    /// Expected I/Os per operation (the KL worst case with ρ) and the class the model derives, through the memo.
    pub(super) fn io_and_class(&self, design: &Design) -> Option<Priced> {
        if let Some(c) = self.scored {
            c.add(1);
        }
        match self.memo {
            Some(m) => m.cost(
                EvalKey::new(design, &self.workload, self.quirks, self.lsh_engine),
                || self.evaluate(design),
            ),
            None => self.evaluate(design),
        }
    }

    /// [`Shard::io_and_class`] priced by the model, as the design runs: one with a class recorded as it is
    /// (the fixed systems' designs, the LSH design), one the search built with the class the model derives
    /// recorded and the faster of its [`Choices`] (a choice that changes the class the model derives is
    /// dropped; None when neither holds).
    pub(super) fn evaluate(&self, design: &Design) -> Option<Priced> {
        let (io, class) = self.price(design)?;
        if design.class.is_some() {
            return Some((io, class, Choices::Built));
        }
        let built = runs_as(design.clone(), class, Choices::Built);
        // recording the class changes nothing the model reads unless it decides whether the design runs as
        // an LSH
        let as_built = if built.runs_as_lsh() == design.runs_as_lsh() {
            Some((io, class))
        } else {
            self.price(&built)
        };
        let table1 = runs_as(design.clone(), class, Choices::Table1);
        let as_table1 = if table1 == built {
            None
        } else {
            self.price(&table1)
        };
        let keep = |priced: Option<(f64, DesignClass)>, choices| {
            let (io, as_run) = priced?;
            (as_run == class).then_some((io, class, choices))
        };
        match (
            keep(as_built, Choices::Built),
            keep(as_table1, Choices::Table1),
        ) {
            // Table 1's choices only where they are faster by more than the model's rounding: two choices that
            // leave the same tree are priced alike up to the order of the sums, and then the design runs as built
            (Some(b), Some(t)) if t.0 < b.0 * (1.0 - TIE) || (b.0.is_nan() && !t.0.is_nan()) => {
                Some(t)
            }
            (Some(b), _) => Some(b),
            (None, t) => t,
        }
    }

    /// One design's expected I/Os per operation (the KL worst case with ρ) and the class the model derives.
    pub(super) fn price(&self, design: &Design) -> Option<(f64, DesignClass)> {
        if let Some(m) = self.memo {
            m.priced.add(1);
        }
        let cost = DistributionAware {
            quirks: self.quirks,
            lsh_engine: self.lsh_engine,
            ..Default::default()
        }
        .evaluate_with_keys(design, &self.workload, &self.keys)
        .ok()?;
        let mix = self.workload.mix;
        let io = match self.rho {
            Some(rho) if rho > 0.0 => {
                let p = cost.per_op;
                crate::robust::kl_worst_value(
                    &mix.to_array(),
                    &[
                        p.lookup,
                        p.empty_lookup,
                        p.insert,
                        p.blind_update,
                        p.rmw,
                        cost.scan,
                    ],
                    rho,
                )
            }
            _ => cost.per_operation,
        };
        Some((io, cost.class))
    }

    /// Seconds to run the shard's operations at `io` I/Os each on a design of class `class` (Eq. 3 and the CPU
    /// floor).
    pub(super) fn latency(&self, io: f64, class: DesignClass) -> f64 {
        let phi = self
            .system_phi
            .unwrap_or_else(|| self.phi.class(class))
            .workload_phi(&self.workload.mix);
        let g = speedup(phi, self.vcpus as f64);
        let ops = self.workload.operations as f64;
        ops * io / self.iops / g + ops / (CPU_OPS_PER_CORE * g)
    }

    pub(super) fn grid_key(&self) -> GridKey {
        GridKey {
            entries: self.workload.entries,
            operations: self.workload.operations,
            operations_before: self.workload.operations_before,
            memory_bytes: self.memory_bytes,
            block_bytes: self.block_bytes,
            quirks: self.quirks,
            lsh_engine: self.lsh_engine,
            epsilon: self.epsilon.to_bits(),
            rho: self.rho.map(f64::to_bits),
        }
    }
}
