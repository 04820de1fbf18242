//! The runs a point lookup consults in memory on its way to its key: each run's filter, fences or hash index
//! that the lookup checks costs CPU (a hash, a search, cache misses) even when it reads nothing. The I/O model
//! counts the blocks a lookup reads; this counts the runs it passes, which the CPU model prices
//! ([`crate::cpu::OpCpu::probe_us`]).

use serde::{Deserialize, Serialize};

/// Runs one point lookup consults, on average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Probes {
    /// A lookup of a key the store holds: the runs newer than the one holding it, and that run.
    pub lookup: f64,
    /// A lookup of a missing key: every run.
    pub empty_lookup: f64,
}

impl Probes {
    /// The probes of a store whose runs are `runs`, newest first, each as (how many runs, entries in one):
    /// a missing key meets every run; a key the store holds lies in a run with the chance of the run's share
    /// of the entries (a uniform key; the newer runs of a skewed workload answer sooner, which this does
    /// not credit), and its lookup meets the runs before it and its own.
    pub fn of_runs(runs: impl IntoIterator<Item = (f64, f64)>) -> Probes {
        let (mut passed, mut found, mut entries) = (0.0, 0.0, 0.0);
        for (count, per_run) in runs {
            if count <= 0.0 {
                continue;
            }
            let held = count * per_run.max(0.0);
            // within a group of like runs the key's run is any of them alike: (count + 1) / 2 consulted
            found += held * (passed + (count + 1.0) / 2.0);
            entries += held;
            passed += count;
        }
        Probes {
            lookup: if entries > 0.0 {
                found / entries
            } else {
                passed
            },
            empty_lookup: passed,
        }
    }

    /// `self` weighted by `w` plus `other` (for averaging over the points of a merge cycle).
    pub fn add_weighted(self, w: f64, other: Probes) -> Probes {
        Probes {
            lookup: self.lookup + w * other.lookup,
            empty_lookup: self.empty_lookup + w * other.empty_lookup,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_runs_are_met_half_way_and_a_miss_meets_all() {
        let p = Probes::of_runs([(64.0, 1000.0)]);
        assert_eq!(p.empty_lookup, 64.0);
        assert!((p.lookup - 32.5).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn a_leveled_tree_is_met_nearly_to_its_last_level() {
        // three levels of one run, T = 10: 1, 10, 100 entries' shares
        let p = Probes::of_runs([(1.0, 1.0), (1.0, 10.0), (1.0, 100.0)]);
        let want = (1.0 + 10.0 * 2.0 + 100.0 * 3.0) / 111.0;
        assert!((p.lookup - want).abs() < 1e-12 && p.empty_lookup == 3.0);
        assert_eq!(Probes::of_runs([]), Probes::default());
        // more runs never mean fewer probes
        let more = Probes::of_runs([(3.0, 1.0), (1.0, 10.0), (1.0, 100.0)]);
        assert!(more.lookup > p.lookup && more.empty_lookup > p.empty_lookup);
    }
}
