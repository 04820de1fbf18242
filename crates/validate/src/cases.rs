//! The cases `cosine validate` runs: the fixed class designs, or held-out designs the model was never tuned
//! on (the search's picks at two memory sizes and two scales, and random valid designs from a seed).

use crate::harness::{class_designs, searched_design};
use crate::{Error, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::{
    Compaction, Design, DesignClass, FilePicking, FilterGranularity, LogKind, RunStrategy,
};
use cosine_ycsb::CoreWorkload;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Which cases to run.
#[derive(Clone, Debug)]
pub struct CaseSpec {
    /// Records loaded (held-out: the smaller of two scales; the other is twice it).
    pub records: u64,
    /// Engine memory in bytes (held-out: the smaller of two sizes; the other is 4×).
    pub memory: u64,
    /// Held-out designs instead of the fixed ones.
    pub held_out: bool,
    /// Random designs in the held-out set.
    pub random: usize,
    /// Seed of the random designs.
    pub seed: u64,
    /// Client thread counts: every case runs once per count.
    pub threads: Vec<usize>,
    /// Fixed designs only: the classes to run.
    pub classes: Vec<DesignClass>,
    /// Designs given by the user, each with its label (a file name): when any, these run on every workload
    /// instead of the fixed or held-out designs.
    pub designs: Vec<(String, Design)>,
}

/// One validation case: a design on a workload at a scale, on a number of client threads.
#[derive(Clone, Debug)]
pub struct Case {
    /// Where the design came from ("fixed lsm", "search 1 MiB 30k", "random #3 (seed 1)").
    pub label: String,
    /// The design.
    pub design: Design,
    /// The workload, at the case's scale.
    pub workload: CoreWorkload,
    /// Client threads.
    pub threads: usize,
}

impl Case {
    /// `design` on one client thread under the YCSB workload `workload` (a name `CoreWorkload::named` knows)
    /// over `records` records and `operations` operations.
    pub fn one_thread(
        label: &str,
        design: Design,
        workload: &str,
        records: u64,
        operations: u64,
    ) -> Result<Case> {
        let mut w = CoreWorkload::named(workload)
            .ok_or_else(|| Error::Invalid(format!("no YCSB workload named {workload}")))?;
        w.record_count = records;
        w.operation_count = operations;
        Ok(Case {
            label: label.into(),
            design,
            workload: w,
            threads: 1,
        })
    }
}

/// A random valid design for `memory` bytes at test scale: any size ratio, runs per hot and cold level,
/// memory split, compaction and block size; one in six is an LSH design.
pub fn random_design(rng: &mut StdRng, memory: u64) -> Design {
    let block_bytes = [4096, 8192, 16384, 32768][rng.random_range(0..4)];
    if rng.random_range(0..6) == 0 {
        let mut d = Design::rocksdb_like(memory * rng.random_range(4..8) / 10, 0, 0);
        d.fence_bytes = memory - d.buffer_bytes;
        (d.size_ratio, d.hot_runs, d.cold_runs) = (1000, 999, 999);
        d.class = Some(DesignClass::Lsh);
        d.filter_granularity = FilterGranularity::Run;
        d.block_bytes = block_bytes;
        return d;
    }
    let t = rng.random_range(2..=16u64);
    let k = rng.random_range(1..t);
    let z = rng.random_range(1..t);
    let buffer = memory * rng.random_range(15..75) / 100;
    let rest = memory - buffer;
    // a quarter without filters (B-tree-like when fences are few too)
    let filters = if rng.random_range(0..4) == 0 {
        0
    } else {
        rest * rng.random_range(10..90) / 100
    };
    let mut d = Design::rocksdb_like(buffer, filters, rest - filters);
    (d.size_ratio, d.hot_runs, d.cold_runs) = (t, k, z);
    d.block_bytes = block_bytes;
    d.file_bytes = [1 << 20, 2 << 20, 4 << 20][rng.random_range(0..3)];
    d.compaction =
        [Compaction::Full, Compaction::Partial, Compaction::Hybrid][rng.random_range(0..3)];
    d.full_compaction_levels = rng.random_range(1..3);
    d.run_strategy = [
        RunStrategy::First,
        RunStrategy::LastFull,
        RunStrategy::Fullest,
    ][rng.random_range(0..3)];
    d.file_picking = [
        FilePicking::Oldest,
        FilePicking::DenseFp,
        FilePicking::SparseFp,
        FilePicking::ChooseFirst,
    ][rng.random_range(0..4)];
    d.filter_granularity =
        [FilterGranularity::File, FilterGranularity::Block][rng.random_range(0..2)];
    d.merge_threshold = [0.5, 0.75, 1.0][rng.random_range(0..3)];
    d.class = None;
    d
}

/// The fixed cases of one class design, each with its label: the design itself, and for the LSH design also
/// its append-only twin (the class design runs FASTER's hybrid log).
pub fn fixed_variants(class: DesignClass, design: &Design) -> Vec<(String, Design)> {
    let mut variants = vec![(class.to_string(), design.clone())];
    if class == DesignClass::Lsh {
        let mut append_only = design.clone();
        append_only.log = LogKind::AppendOnly;
        variants.push((format!("{class} append-only"), append_only));
    }
    variants
}

/// The cases of `spec`; `workloads(records)` gives the workloads at a scale.
pub fn cases(
    spec: &CaseSpec,
    workloads: impl Fn(u64) -> Result<Vec<CoreWorkload>>,
) -> Result<Vec<Case>> {
    if spec.threads.is_empty() || spec.threads.contains(&0) {
        return Err(Error::Invalid("thread counts must be at least 1".into()));
    }
    let mut designs: Vec<(String, Design, CoreWorkload)> = Vec::new();
    if !spec.designs.is_empty() {
        for w in workloads(spec.records)? {
            for (label, d) in &spec.designs {
                designs.push((label.clone(), d.clone(), w.clone()));
            }
        }
    } else if spec.held_out {
        let phi = PhiLibrary::default();
        for records in [spec.records, 2 * spec.records] {
            for memory in [spec.memory, 4 * spec.memory] {
                for w in workloads(records)? {
                    let mut d = searched_design(&w, memory, &phi)?;
                    // test scale: files of at most 4 MiB so that merges happen at this size
                    d.file_bytes = d.file_bytes.min(4 << 20);
                    let label = format!("search {} MiB {}k", memory >> 20, records / 1000);
                    designs.push((label, d, w));
                }
            }
        }
        let mut rng = StdRng::seed_from_u64(spec.seed);
        let ws = workloads(spec.records)?;
        if ws.is_empty() {
            return Err(Error::Invalid("no workload given".into()));
        }
        let mut lsh_seen = 0;
        for i in 0..spec.random {
            let mut d = random_design(&mut rng, spec.memory);
            // LSH designs take both log kinds in turn (without drawing from the seed's sequence, so every
            // other design stays what it was): the hybrid log's read-only region and an append-only log
            if d.runs_as_lsh() {
                if lsh_seen % 2 == 1 {
                    d.log = LogKind::AppendOnly;
                }
                lsh_seen += 1;
            }
            let w = ws[rng.random_range(0..ws.len())].clone();
            designs.push((format!("random #{i} (seed {})", spec.seed), d, w));
        }
    } else {
        for (class, d) in class_designs(spec.memory) {
            if !spec.classes.contains(&class) {
                continue;
            }
            for w in workloads(spec.records)? {
                for (label, d) in fixed_variants(class, &d) {
                    designs.push((format!("fixed {label}"), d, w.clone()));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (label, design, workload) in designs {
        design.validate()?;
        for &t in &spec.threads {
            out.push(Case {
                label: label.clone(),
                design: design.clone(),
                workload: workload.clone(),
                threads: t,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn random_designs_are_valid_and_varied() {
        let mut rng = StdRng::seed_from_u64(7);
        let designs: Vec<Design> = (0..200).map(|_| random_design(&mut rng, 8 << 20)).collect();
        for d in &designs {
            d.validate().unwrap();
            assert!(d.memory_bytes() <= 8 << 20);
        }
        let lsh = designs.iter().filter(|d| d.size_ratio == 1000).count();
        assert!(lsh > 10 && lsh < 80, "{lsh}");
        assert!(designs
            .iter()
            .any(|d| d.filter_bytes == 0 && d.size_ratio < 1000));
        assert!(designs.iter().any(|d| d.hot_runs > d.cold_runs));
        // the same seed gives the same designs
        let mut again = StdRng::seed_from_u64(7);
        assert_eq!(random_design(&mut again, 8 << 20), designs[0]);
    }
}
