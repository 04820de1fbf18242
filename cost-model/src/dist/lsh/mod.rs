//! Log-structured hash tables (the LSH class): the log's memory (our write buffer and read-only region, or
//! FASTER's log pages), a lookup's block and the cold runs' index blocks on its way, a write's appends and
//! merges, a scan over every run.

mod ages;
mod engine;

pub(in crate::dist) use ages::over_ages;
pub use ages::LshAges;
pub use engine::{LshEngine, FASTER_RECORD_HEADER_BYTES, FASTER_SECTOR_BYTES};

use crate::dist::flow::{writes, written, written_before};
use crate::dist::lookup::cache_hits;
use crate::dist::write::{engine_write_cost, write_levels};
use crate::dist::DistributionAware;
use crate::keys::{exp_or_zero, harmonic, KeySpace};
use crate::layout::DataShape;
use crate::{IoCost, PerOp};
use cosine_design::{Design, KeyDistribution, LogKind, Workload};

impl DistributionAware {
    pub(in crate::dist) fn evaluate_lsh(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        keys: &KeySpace,
    ) -> IoCost {
        let q = &self.quirks;
        let t = design.size_ratio as f64;
        let k = (t - 1.0).max(1.0);
        let b = shape.entries_per_block;
        // entries in `bytes` of the hash-log buffer (its allocations and table), or by the key and value
        // bytes alone (the quirk): a flush's, and the hybrid log's read-only region's
        let held_in = |bytes: f64| {
            if q.lsh_entries_by_payload {
                bytes / shape.entry_bytes
            } else {
                cosine_design::shape::hash_log_flush_entries(
                    bytes as usize,
                    workload.key_bytes as usize,
                    workload.value_bytes as usize,
                ) as f64
            }
        };
        let eb = held_in(q.flush_bytes(design));
        // bytes an entry weighs in a level (its run file's), as the planner pushes levels by
        let level_entry = if q.lsh_entries_by_payload {
            shape.entry_bytes
        } else {
            crate::loaded::Sizes::of(
                workload.key_bytes as usize,
                workload.value_bytes as usize,
                design.block_bytes as usize,
            )
            .disk_entry
            .max(shape.entry_bytes)
        };
        // entries of the hybrid log's read-only region (M_B less the mutable region), and N
        let e_ro = if design.read_only_bytes() > 0 {
            held_in(design.read_only_bytes() as f64)
        } else {
            0.0
        };
        let n = shape.entries.max(1.0);
        let mut parts = keys.parts_cow();
        if q.lsh_unconditioned {
            if let KeySpace::Skew { .. } = keys {
                let p = parts.to_mut();
                p.truncate(1);
                p[0].get = 1.0;
            }
        }
        let mut lookup = 0.0;
        let mut insert = 0.0;
        let mut weight = 0.0;
        // our engine's runs whose hash indexes do not fit M_FP: index blocks a lookup reads on its way
        let ages = LshAges::new(design, workload, shape, &parts, eb, k);
        // (the points of a level's cycle a lookup meets, made once for every key partition)
        let phases = ages.middle_phases();
        let mut cold_probes = 0.0;
        let hits = cache_hits(design, workload, &parts);
        let record_reads = self.lsh_engine.record_reads(shape.entry_bytes);
        // fixed model: the buffer is half full on average, and empty for a workload without writes
        let eb0 = if q.full_buffer {
            eb
        } else if writes(workload) {
            eb / 2.0
        } else {
            0.0
        };
        // Memory holds the log's newest records (entries, and whether a region outlives the load): our engine's
        // write buffer (the hybrid log's mutable region, updated in place) and the hybrid log's read-only region
        // (the newest flushed records); FASTER's log pages, always full. As for every design, the model prices
        // the steady state, in which a workload that writes has filled them with its own writes, drawn by the
        // write distribution (a short run after a load holds more of the load's records: the peer runs' YCSB-B,
        // 5,000 updates, read more than priced). A workload that does not write leaves the load's newest in the
        // regions that outlive the load, which the load wrote one per key: a uniform share of the N stored
        // keys, whichever keys the reads favour.
        let windows: [(f64, bool); 2] = match (self.lsh_engine, design.log) {
            (LshEngine::Faster, _) => [
                (design.buffer_bytes as f64 / shape.entry_bytes, true),
                (0.0, false),
            ],
            (LshEngine::Cosine, LogKind::Hybrid) => [(eb0, false), (e_ro, true)],
            (LshEngine::Cosine, LogKind::AppendOnly) => [(eb0, false), (0.0, false)],
        };
        let from_load: f64 = windows.iter().filter(|w| w.1).map(|w| w.0).sum();
        for (part, hit) in parts.iter().zip(hits.iter()) {
            // the chance the key is in memory
            let a0 = if q.lsh_calibrated {
                match design.log {
                    LogKind::AppendOnly => KeySpace::alpha(part, eb0),
                    // the authors' code: a mutable tail of 0.9 of the log's memory and a read-only 0.1
                    LogKind::Hybrid => {
                        let mutable = KeySpace::alpha(part, 0.9 * eb);
                        let read_only = KeySpace::alpha(part, 0.1 * eb);
                        1.0 - (1.0 - mutable) * (1.0 - read_only)
                    }
                }
            } else if writes(workload) {
                1.0 - windows
                    .iter()
                    .map(|&(w, _)| 1.0 - KeySpace::alpha(part, w))
                    .product::<f64>()
            } else {
                KeySpace::alpha(part, n) * (from_load / n).min(1.0)
            };
            let (on_disk, exists) = if q.lsh_calibrated {
                // the authors' code: a key exists when it is in memory or in one of K full runs (of
                // eb·T/K entries each for an append-only log, eb·T for the hybrid one)
                let run = match design.log {
                    LogKind::AppendOnly => eb * t / k,
                    LogKind::Hybrid => eb * t,
                };
                let pi = exp_or_zero(k * (-KeySpace::alpha(part, run)).ln_1p());
                ((1.0 - pi) * (1.0 - a0), 1.0 - pi * (1.0 - a0))
            } else {
                // a looked-up key is one of the N the store holds (K full runs would hold far more: with
                // T = 1000 and a sparse key space that counted 0.1% of the lookups in memory where our
                // engine answered 7% from its buffer); it is in memory with the odds a0 gives it
                let exists = KeySpace::alpha(part, n).max(a0);
                (exists - a0, exists)
            };
            if exists <= 0.0 {
                continue;
            }
            let cond = if q.lsh_unconditioned {
                on_disk
            } else {
                on_disk / exists
            };
            let (l_cost, p_cost) = match design.log {
                // our engine: the in-memory hash index points at the one block to read; a write is appended
                LogKind::AppendOnly if !q.lsh_calibrated => (record_reads * cond, 1.0 / b),
                LogKind::AppendOnly => (
                    self.calibration.lsh_lookup_scale * cond,
                    self.calibration.lsh_insert_scale * on_disk / exists,
                ),
                LogKind::Hybrid if !q.lsh_calibrated => {
                    (record_reads * cond, (1.0 / b).min(on_disk / exists))
                }
                LogKind::Hybrid => (cond, (1.0 / b).min(on_disk / exists)),
            };
            // a lookup the entry cache answers reads nothing
            lookup += part.get * (1.0 - hit) * l_cost;
            insert += part.put * p_cost;
            weight += part.get;
            // FASTER's hash index is in memory: no index block on the way
            if !q.lsh_calibrated && self.lsh_engine == LshEngine::Cosine {
                cold_probes += part.get
                    * (1.0 - hit)
                    * cond
                    * over_ages(&ages, &phases, |a| a.cold_probes(part));
            }
        }
        if weight > 0.0 && !q.lsh_unconditioned {
            lookup /= weight;
            cold_probes /= weight;
        }
        if let (KeyDistribution::Latest { theta }, false) = (&workload.reads, q.latest_as_zipfian) {
            // the newest keys are in the buffer (half full on average) and the hybrid log's read-only region;
            // any older one costs the one block its hash index points to
            let in_buffer = match self.lsh_engine {
                // FASTER's log pages: the newest records, the load's until writes replace them
                LshEngine::Faster if !q.lsh_calibrated => {
                    design.buffer_bytes as f64 / shape.entry_bytes
                }
                _ => {
                    let buffer = if writes(workload) { eb / 2.0 } else { 0.0 };
                    buffer + if q.lsh_calibrated { 0.0 } else { e_ro }
                }
            };
            let on_disk = 1.0 - harmonic(in_buffer.min(n), *theta) / harmonic(n, *theta);
            lookup = if q.lsh_calibrated {
                on_disk
            } else {
                record_reads * on_disk
            };
            // a read's key is the r-th newest insert with Zipf probability: older than y writes when r is
            // above y's share of inserts
            let m = &workload.mix;
            let inserts = m.insert / (m.insert + m.blind_update + m.rmw).max(1e-12);
            let inserts = if inserts > 0.0 { inserts } else { 1.0 };
            cold_probes = if self.lsh_engine == LshEngine::Faster {
                0.0
            } else {
                over_ages(&ages, &phases, |a| {
                    a.cold_probes_by_age(|y| {
                        1.0 - harmonic((y * inserts).min(n), *theta) / harmonic(n, *theta)
                    })
                })
            };
        }
        let s = workload.scan_length as f64;
        // the levels the log's runs fill: the versions they hold over the engine's level capacities
        let levels = ages.levels();
        let per_op = if q.lsh_calibrated {
            PerOp {
                lookup,
                // [R] a miss follows its hash bucket's chain to the log once: the index covers N/8 keys
                empty_lookup: 1.0,
                insert,
                blind_update: lookup + 1.0 / b,
                rmw: lookup + 1.0 / b,
                long_scan: s,
                short_scan: s,
            }
        } else {
            // the log's runs are sorted files under a hash index: a scan seeks into each (index block and
            // data block: the hash index cannot seek by key order) and reads s/B blocks in all
            let runs = ages.runs().max(1.0);
            // every lookup that leaves the buffers reads its block; on its way it reads the on-disk index of
            // each cold run newer than the one holding its key (no filter skips one)
            let lookup = lookup + cold_probes;
            // a write is appended to the log; the log's level is pushed down (its runs read, their distinct
            // keys written as one run below) once it holds K runs or θ of its capacity: what the planner's
            // simulation moves where it runs (a design that compacts partially), else the closed form
            let write = if q.table2_write_cost {
                1.0 / b
            } else if let Some(simulated) =
                self.lsh_simulated_write(design, workload, shape, &parts, eb)
            {
                simulated
            } else {
                engine_write_cost(
                    &write_levels(design, levels, levels, level_entry, q),
                    eb,
                    b,
                    &parts,
                    ages.versions(),
                    written_before(workload)..written(workload),
                    q.levels_always_fill,
                )
            };
            let insert = if q.table2_write_cost { insert } else { write };
            if self.lsh_engine == LshEngine::Faster {
                // FASTER: a write goes to its log's tail, written out a page at a time; a miss finds no key in
                // the in-memory index; a scan of s keys is s lookups (no ordered scan)
                let write = 1.0 / b;
                let scan = s * lookup;
                // (one log: FASTER's has no levels)
                return IoCost::lsh(
                    design,
                    workload,
                    1,
                    PerOp {
                        lookup,
                        empty_lookup: 0.0,
                        insert: write,
                        blind_update: write,
                        rmw: lookup + write,
                        long_scan: scan,
                        short_scan: scan,
                    },
                    scan,
                );
            }
            PerOp {
                lookup,
                // a miss reads the on-disk index of every cold run, and the data block it names
                empty_lookup: 2.0 * over_ages(&ages, &phases, LshAges::cold_runs),
                insert,
                blind_update: write,
                rmw: lookup + write,
                long_scan: 2.0 * runs + s / b,
                short_scan: 2.0 * runs,
            }
        };
        IoCost::lsh(design, workload, levels, per_op, per_op.long_scan)
    }
}
