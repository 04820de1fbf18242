//! Pricing one design on a shard: the I/O model (with Endure's KL worst case under ρ), the class it derives
//! and the algorithmic choices it runs with, and its time on the VM.

use crate::designs::memo::{EvalKey, GridKey, Priced};
use crate::designs::shapes::with_class_defaults;
use crate::designs::{Scored, Shard};
use cosine_cost_model::cpu::paper_eq3_seconds;
use cosine_cost_model::layout::{self, DataShape};
use cosine_cost_model::machine::{
    delivered, max_recoverable_buffer, recovery_seconds, Delivered, ThroughputModel,
};
use cosine_cost_model::requests::{page_cache_share, OpIo};
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

    /// Scores one design; None when the model rejects it, or its write buffer would not recover within the
    /// bound.
    pub fn score(&self, design: Design) -> Option<Scored> {
        if self.recovery_s(&design) > self.max_recovery_s * (1.0 + TIE) {
            return None;
        }
        let priced = self.io_and_class(&design)?;
        self.scored(design, &priced)
    }

    /// A priced design timed on this VM: None where the machine cannot run it (no operations a second).
    pub(super) fn scored(&self, design: Design, p: &Priced) -> Option<Scored> {
        let t = self.timed(p);
        if !t.latency_s.is_finite() {
            return None;
        }
        let recovery_s = self.recovery_s(&design);
        Some(Scored {
            design: runs_as(design, p.class, p.choices),
            class: p.class,
            io_per_op: p.io,
            requests: p.requests,
            phi: t.phi,
            cpu_s: t.cpu_s,
            latency_s: t.latency_s,
            delivered: t.delivered,
            recovery_s,
            template: None,
        })
    }

    /// The workload φ of a design of `class` on this shard (a fixed system's own where it has one).
    pub(super) fn workload_phi(&self, class: DesignClass) -> f64 {
        self.system_phi
            .unwrap_or_else(|| self.phi.class(class))
            .workload_phi(&self.workload.mix)
    }

    /// CPU seconds one operation of the shard's workload costs on one core, with the requests `io`.
    pub(super) fn cpu_seconds(&self, class: DesignClass, io: &OpIo) -> f64 {
        let op = self.system_cpu.unwrap_or_else(|| self.cpu.class(class));
        self.cpu
            .seconds_per_op(&op, &self.workload.mix, self.workload.scan_length, io)
    }

    /// Seconds to run the shard's operations at the priced I/Os: within the machine's limits
    /// ([`delivered`]), or the paper's Eq. 3 with its CPU floor.
    pub(super) fn timed(&self, p: &Priced) -> Timed {
        let phi = self.workload_phi(p.class);
        let ops = self.workload.operations as f64;
        let cpu_s = self.cpu_seconds(p.class, &p.requests);
        match self.throughput {
            ThroughputModel::Paper => Timed {
                phi,
                cpu_s,
                latency_s: paper_eq3_seconds(
                    ops,
                    p.io,
                    self.machine.iops,
                    phi,
                    self.machine.vcpus as f64,
                ),
                delivered: None,
            },
            ThroughputModel::Physical => {
                let d = delivered(&p.requests, cpu_s, phi, &self.machine);
                Timed {
                    phi,
                    cpu_s,
                    latency_s: ops / d.ops_per_s,
                    delivered: Some(d),
                }
            }
        }
    }

    /// Seconds a restart takes to bring `design`'s write buffers back ([`recovery_seconds`]): the bytes not yet
    /// flushed, both buffers (the hybrid log's mutable regions), replayed from the log at the volume's
    /// bandwidth, each entry inserted again, the frozen one flushed. 0 under the paper's model.
    pub fn recovery_s(&self, design: &Design) -> f64 {
        if self.throughput == ThroughputModel::Paper {
            return 0.0;
        }
        let unflushed = design
            .flush_bytes()
            .saturating_mul(Design::WRITE_BUFFERS)
            .min(design.buffer_bytes);
        recovery_seconds(
            unflushed,
            self.workload.key_bytes,
            self.workload.value_bytes,
            self.insert_cpu_s(),
            &self.machine,
        )
    }

    /// CPU seconds an insert costs on one core (what a recovery's replay spends per entry).
    fn insert_cpu_s(&self) -> f64 {
        let op = self
            .system_cpu
            .unwrap_or_else(|| self.cpu.class(DesignClass::Lsm));
        op.insert_us * 1e-6
    }

    /// The largest write buffer the search gives a design on this shard: the design memory, or under the
    /// physical model the largest buffer that recovers within [`Shard::max_recovery_s`], rounded down to a
    /// power of two (so that shards of nearby bandwidths search the same buffer sizes).
    pub fn buffer_ceiling(&self) -> u64 {
        if self.throughput == ThroughputModel::Paper {
            return self.memory_bytes;
        }
        let most = max_recoverable_buffer(
            self.max_recovery_s,
            self.workload.key_bytes,
            self.workload.value_bytes,
            self.insert_cpu_s(),
            &self.machine,
        );
        let pow2 = if most == 0 {
            0
        } else {
            1u64 << (63 - most.leading_zeros())
        };
        pow2.min(self.memory_bytes)
    }

    /// Expected I/Os per operation (the KL worst case with ρ) and the class the model derives, through the memo.
    pub(super) fn io_and_class(&self, design: &Design) -> Option<Priced> {
        if let Some(c) = self.scored {
            c.add(1);
        }
        match self.memo {
            Some(m) => m.cost(
                EvalKey::new(
                    design,
                    &self.workload,
                    self.quirks,
                    self.lsh_engine,
                    self.machine.page_cache_bytes,
                ),
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
        let (io, requests, class) = self.price(design)?;
        let priced = |(io, requests, class), choices| Priced {
            io,
            requests,
            class,
            choices,
        };
        if design.class.is_some() {
            return Some(priced((io, requests, class), Choices::Built));
        }
        let built = runs_as(design.clone(), class, Choices::Built);
        // recording the class changes nothing the model reads unless it decides whether the design runs as
        // an LSH
        let as_built = if built.runs_as_lsh() == design.runs_as_lsh() {
            Some((io, requests, class))
        } else {
            self.price(&built)
        };
        let table1 = runs_as(design.clone(), class, Choices::Table1);
        let as_table1 = if table1 == built {
            None
        } else {
            self.price(&table1)
        };
        let keep = |p: Option<(f64, OpIo, DesignClass)>, choices| {
            let (io, requests, as_run) = p?;
            (as_run == class).then(|| priced((io, requests, class), choices))
        };
        match (
            keep(as_built, Choices::Built),
            keep(as_table1, Choices::Table1),
        ) {
            // Table 1's choices only where they are faster by more than the model's rounding: two choices that
            // leave the same tree are priced alike up to the order of the sums, and then the design runs as built
            (Some(b), Some(t))
                if t.io < b.io * (1.0 - TIE) || (b.io.is_nan() && !t.io.is_nan()) =>
            {
                Some(t)
            }
            (Some(b), _) => Some(b),
            (None, t) => t,
        }
    }

    /// One design's expected I/Os per operation (the KL worst case with ρ), what they ask of a volume, and the
    /// class the model derives.
    pub(super) fn price(&self, design: &Design) -> Option<(f64, OpIo, DesignClass)> {
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
        let w = &self.workload;
        let log =
            cosine_design::shape::log_write_bytes(w.key_bytes as usize, w.value_bytes as usize);
        let mut requests = OpIo::of(&cost, w, design.block_bytes, log as f64);
        requests.cached_share = self.page_cache_share(design);
        let (io, requests) = match self.rho {
            Some(rho) if rho > 0.0 => {
                let p = cost.per_op;
                let worst = crate::robust::kl_worst_value(
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
                );
                (worst, requests.scaled_to(worst))
            }
            _ => (cost.per_operation, requests),
        };
        Some((io, requests, cost.class))
    }

    /// The share of `design`'s random reads the page cache answers (the physical model): the memory the design
    /// never fills (its whole write buffer for a workload that does not write; under writes, the room beyond
    /// the buffers that fill before a flush, since at the peak the active buffer is full while the frozen one
    /// flushes) and the page cache the machine keeps for the engine's files, over the reads its entry cache
    /// and its write buffer do not answer ([`page_cache_share`]).
    fn page_cache_share(&self, design: &Design) -> f64 {
        if self.throughput == ThroughputModel::Paper {
            return 0.0;
        }
        let w = &self.workload;
        let writes = w.mix.insert + w.mix.blind_update + w.mix.rmw > 0.0;
        let filled = if writes {
            design
                .flush_bytes()
                .saturating_mul(Design::WRITE_BUFFERS)
                .min(design.buffer_bytes)
        } else {
            0
        };
        let free = (design.buffer_bytes - filled) as f64 + self.machine.page_cache_bytes;
        // the keys memory already answers before the page cache: the entry cache's, and under writes the
        // write buffer's (its mean fill, half a flush: the recently written keys, which a skewed workload
        // also reads most)
        let buffered = if writes {
            design.flush_bytes() as f64 / 2.0 / w.entry_bytes().max(1) as f64
        } else {
            0.0
        };
        let cached_entries = design.cache_bytes as f64
            / (w.entry_bytes() + cosine_design::CACHE_ENTRY_OVERHEAD_BYTES) as f64
            + buffered;
        page_cache_share(
            &self.keys.parts_cow(),
            w.entries as f64,
            cached_entries,
            free,
            design.block_bytes as f64,
        )
    }

    pub(super) fn grid_key(&self) -> GridKey {
        GridKey {
            entries: self.workload.entries,
            operations: self.workload.operations,
            operations_before: self.workload.operations_before,
            memory_bytes: self.memory_bytes,
            buffer_ceiling: self.buffer_ceiling(),
            block_bytes: self.block_bytes,
            quirks: self.quirks,
            lsh_engine: self.lsh_engine,
            epsilon: self.epsilon.to_bits(),
            rho: self.rho.map(f64::to_bits),
            page_cache: self.machine.page_cache_bytes.to_bits(),
        }
    }
}

/// A priced design's time on a shard.
pub(super) struct Timed {
    /// Workload φ.
    pub(super) phi: f64,
    /// CPU seconds an operation costs on one core.
    pub(super) cpu_s: f64,
    /// Seconds for the shard's operations.
    pub(super) latency_s: f64,
    /// The machine's limits (the physical model).
    pub(super) delivered: Option<Delivered>,
}
