//! Log-structured hash tables (the LSH class): the log's memory (our write buffer and read-only region, or
//! FASTER's log pages), a lookup's block and the cold runs' index blocks on its way, a write's appends and
//! merges, a scan over every run.

mod ages;
mod engine;

pub(in crate::dist) use ages::over_ages;
pub use ages::LshAges;
pub use engine::{LshEngine, FASTER_RECORD_HEADER_BYTES, FASTER_SECTOR_BYTES};

use crate::dist::flow::writes;
use crate::dist::lookup::cache_hits;
use crate::dist::{reference, write, DistributionAware};
use crate::keys::{harmonic, KeyPart, KeySpace};
use crate::layout::DataShape;
use crate::probes::Probes;
use crate::{IoCost, PerOp};
use cosine_design::{Design, KeyDistribution, LogKind, Workload};
use std::borrow::Cow;

/// What an LSH design's log holds, worked out once for its pricing: the entries a flush holds, the read-only
/// region's and the write buffer's on average, the runs per level before a merge (K = T − 1), the key
/// partitions a lookup draws from and the entry cache's hits in each, and where the versions lie by age.
pub(in crate::dist) struct Log<'k> {
    /// Entries of one flush (the hash-log buffer's).
    pub(in crate::dist) eb: f64,
    /// Entries of the hybrid log's read-only region (0 without one).
    pub(in crate::dist) read_only: f64,
    /// Entries the write buffer holds on average: half a flush's, none for a workload that does not write.
    pub(in crate::dist) buffer: f64,
    /// K: runs a level gathers before it is pushed down.
    pub(in crate::dist) k: f64,
    /// N, at least 1.
    pub(in crate::dist) n: f64,
    /// Bytes an entry weighs in a level (its run file's), as the planner pushes levels by.
    pub(in crate::dist) level_entry: f64,
    /// The key partitions lookups and writes draw from.
    pub(in crate::dist) parts: Cow<'k, [KeyPart]>,
    /// Per partition, the chance the entry cache answers a lookup.
    pub(in crate::dist) hits: Cow<'k, [f64]>,
    /// Where the versions lie by age, and which runs' indexes M_FP covers.
    pub(in crate::dist) ages: LshAges,
}

impl DistributionAware {
    /// The I/Os of each operation on an LSH design's log: a lookup reads the block its hash index names
    /// (FASTER: a record's sectors) unless memory holds the key, and the on-disk index of each cold run newer
    /// than the key's; a miss the index of every cold run; a write is appended and merged as the planner runs
    /// the log's levels; a scan seeks into every run. The reference code's constants are
    /// [`reference::calibrated_lsh`]'s.
    pub(in crate::dist) fn evaluate_lsh(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        keys: &KeySpace,
    ) -> IoCost {
        let q = &self.quirks;
        let log = self.log(design, workload, shape, keys);
        if q.lsh_calibrated {
            return reference::calibrated_lsh(&self.calibration, q, design, workload, shape, &log);
        }
        let b = shape.entries_per_block;
        let s = workload.scan_length as f64;
        // (the points of a level's cycle a lookup meets, made once for every key partition)
        let phases = log.ages.middle_phases();
        let (mut lookup, mut cold_probes, appended) =
            self.log_lookups(design, workload, shape, &log, &phases);
        if let (KeyDistribution::Latest { theta }, false) = (&workload.reads, q.latest_as_zipfian) {
            (lookup, cold_probes) =
                self.latest_log_lookups(design, workload, shape, &log, &phases, *theta);
        }
        // every lookup that leaves the buffers reads its block; on its way it reads the on-disk index of
        // each cold run newer than the one holding its key (no filter skips one)
        let lookup = lookup + cold_probes;
        if let Some((per_op, scan)) = self.lsh_engine.own_costs(lookup, b, s) {
            // (one log: FASTER's has no levels)
            // (its hash index is one table: a lookup consults it once)
            let one = Probes {
                lookup: 1.0,
                empty_lookup: 1.0,
            };
            return IoCost::lsh(design, workload, 1, per_op, scan, one);
        }
        let write = if q.table2_write_cost {
            1.0 / b
        } else {
            write::log_write(
                design,
                workload,
                shape,
                &log,
                q,
                (self.lsh_engine, self.write_phase),
            )
        };
        let insert = if q.table2_write_cost { appended } else { write };
        // the log's runs are sorted files under a hash index: a scan seeks into each (index block and data
        // block: the hash index cannot seek by key order) and reads s/B blocks in all
        let runs = log.ages.runs().max(1.0);
        let per_op = PerOp {
            lookup,
            // a miss reads the on-disk index of every cold run, and the data block it names
            empty_lookup: 2.0 * over_ages(&log.ages, &phases, LshAges::cold_runs),
            insert,
            blind_update: write,
            rmw: lookup + write,
            long_scan: 2.0 * runs + s / b,
            short_scan: 2.0 * runs,
        };
        // the levels the log's runs fill: the versions they hold over the engine's level capacities
        IoCost::lsh(
            design,
            workload,
            log.ages.levels(),
            per_op,
            per_op.long_scan,
            phases.iter().fold(
                if phases.is_empty() {
                    log.ages.probes()
                } else {
                    Probes::default()
                },
                |sum, (w, a)| sum.add_weighted(*w, a.probes()),
            ),
        )
    }

    /// The log of `design` under `workload` ([`Log`]).
    /// The planner's simulation of an LSH design's log under `workload`'s writes, where it runs
    /// ([`write::log_simulated`]).
    pub(in crate::dist) fn log_under_writes(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        keys: &KeySpace,
    ) -> Option<std::rc::Rc<crate::loaded::UnderWrites>> {
        let log = self.log(design, workload, shape, keys);
        write::log_simulated(
            design,
            workload,
            shape,
            &log,
            &self.quirks,
            (self.lsh_engine, self.write_phase),
        )
    }

    fn log<'k>(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        keys: &'k KeySpace,
    ) -> Log<'k> {
        let q = &self.quirks;
        let k = (design.size_ratio as f64 - 1.0).max(1.0);
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
        // entries of the hybrid log's read-only region (M_B less the mutable region)
        let read_only = if design.read_only_bytes() > 0 {
            held_in(design.read_only_bytes() as f64)
        } else {
            0.0
        };
        let mut parts = keys.parts_cow();
        if q.lsh_unconditioned {
            if let KeySpace::Skew { .. } = keys {
                let p = parts.to_mut();
                p.truncate(1);
                p[0].get = 1.0;
            }
        }
        // our engine's runs whose hash indexes do not fit M_FP: index blocks a lookup reads on its way
        let ages = LshAges::new(design, workload, shape, &parts, eb, k);
        let hits = cache_hits(design, workload, &parts);
        // fixed model: the buffer is half full on average, and empty for a workload without writes
        let buffer = if q.full_buffer {
            eb
        } else if writes(workload) {
            eb / 2.0
        } else {
            0.0
        };
        Log {
            eb,
            read_only,
            buffer,
            k,
            n: shape.entries.max(1.0),
            level_entry,
            parts,
            hits,
            ages,
        }
    }

    /// A lookup's blocks over the key partitions: its record's read where memory does not hold the key, and
    /// (separately) the cold runs' index blocks on its way; and, for Table 2's write cost, the share of writes
    /// that are appended.
    ///
    /// Memory holds the log's newest records ([`LshEngine::memory`]). As for every design, the model prices the
    /// steady state, in which a workload that writes has filled them with its own writes, drawn by the write
    /// distribution (a short run after a load holds more of the load's records: the peer runs' YCSB-B, 5,000
    /// updates, read more than priced). A workload that does not write leaves the load's newest in the regions
    /// that outlive the load, which the load wrote one per key: a uniform share of the N stored keys,
    /// whichever keys the reads favour.
    fn log_lookups(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        log: &Log,
        phases: &[(f64, LshAges)],
    ) -> (f64, f64, f64) {
        let q = &self.quirks;
        let (b, n) = (shape.entries_per_block, log.n);
        let record_reads = self.lsh_engine.record_reads(shape.entry_bytes);
        let windows = self
            .lsh_engine
            .memory(design, shape.entry_bytes, log.buffer, log.read_only);
        let from_load: f64 = windows.iter().filter(|w| w.1).map(|w| w.0).sum();
        let (mut lookup, mut cold_probes, mut appended, mut weight) = (0.0, 0.0, 0.0, 0.0);
        for (part, hit) in log.parts.iter().zip(log.hits.iter()) {
            // the chance the key is in memory
            let a0 = if writes(workload) {
                1.0 - windows
                    .iter()
                    .map(|&(w, _)| 1.0 - KeySpace::alpha(part, w))
                    .product::<f64>()
            } else {
                KeySpace::alpha(part, n) * (from_load / n).min(1.0)
            };
            // a looked-up key is one of the N the store holds (K full runs would hold far more: with T = 1000
            // and a sparse key space that counted 0.1% of the lookups in memory where our engine answered 7%
            // from its buffer); it is in memory with the odds a0 gives it
            let exists = KeySpace::alpha(part, n).max(a0);
            let on_disk = exists - a0;
            if exists <= 0.0 {
                continue;
            }
            let cond = if q.lsh_unconditioned {
                on_disk
            } else {
                on_disk / exists
            };
            // the in-memory hash index points at the one block to read; a write is appended
            let append = match design.log {
                LogKind::AppendOnly => 1.0 / b,
                LogKind::Hybrid => (1.0 / b).min(on_disk / exists),
            };
            // a lookup the entry cache answers reads nothing
            lookup += part.get * (1.0 - hit) * (record_reads * cond);
            appended += part.put * append;
            weight += part.get;
            if self.lsh_engine.reads_cold_indexes() {
                cold_probes += part.get
                    * (1.0 - hit)
                    * cond
                    * over_ages(&log.ages, phases, |a| a.cold_probes(part));
            }
        }
        if weight > 0.0 && !q.lsh_unconditioned {
            lookup /= weight;
            cold_probes /= weight;
        }
        (lookup, cold_probes, appended)
    }

    /// A "latest" lookup's record reads and cold index blocks: the newest keys are in memory
    /// ([`LshEngine::newest_in_memory`]); any older one costs the record its hash index points to, and the
    /// index blocks of the cold runs newer than it.
    fn latest_log_lookups(
        &self,
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        log: &Log,
        phases: &[(f64, LshAges)],
        theta: f64,
    ) -> (f64, f64) {
        let n = log.n;
        let buffer = if writes(workload) { log.eb / 2.0 } else { 0.0 };
        let in_memory =
            self.lsh_engine
                .newest_in_memory(design, shape.entry_bytes, buffer, log.read_only);
        let on_disk = 1.0 - harmonic(in_memory.min(n), theta) / harmonic(n, theta);
        let lookup = self.lsh_engine.record_reads(shape.entry_bytes) * on_disk;
        // a read's key is the r-th newest insert with Zipf probability: older than y writes when r is above
        // y's share of inserts
        let m = &workload.mix;
        let inserts = m.insert / (m.insert + m.blind_update + m.rmw).max(1e-12);
        let inserts = if inserts > 0.0 { inserts } else { 1.0 };
        let cold_probes = if self.lsh_engine.reads_cold_indexes() {
            over_ages(&log.ages, phases, |a| {
                a.cold_probes_by_age(|y| {
                    1.0 - harmonic((y * inserts).min(n), theta) / harmonic(n, theta)
                })
            })
        } else {
            0.0
        };
        (lookup, cold_probes)
    }
}
