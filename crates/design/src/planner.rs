//! The compaction policy as a pure function: it looks at a version's shape and the design and returns a plan
//! (STYLE.md §2). It lives here, below the engine and the cost model alike: the engine's mechanism
//! (`cosine_levels::compaction`) carries plans out, and the cost model runs the same plans on a shape without
//! data ([`crate::simulate`]) to price the tree a load leaves; tests can run the planner alone.
//!
//! Rules, checked from the top level down (level i holds at most R_i runs, R_i = K for hot levels above the
//! last, Z for cold levels and the last level; its capacity is (M_B/2)·T^i bytes, a flush being half of M_B):
//! 1. Too many runs. R_i = 1 (leveling): merge the level's runs in place, or, when full compaction merges the
//!    level whole and its merged run is full by bytes alone, push all its runs down at once (rule 2). R_i > 1
//!    (tiering): once the level holds R_i runs it is full; merge them into one run of level i+1. At the last
//!    level, merge in place.
//!    Which runs: the run strategy picks a window of adjacent runs (first = oldest, last_full = newest,
//!    fullest = largest), so recency order is kept.
//! 2. Too many bytes (≥ capacity × merge threshold): push level i into level i+1. Full compaction merges the
//!    whole level (into level i+1's run when R_{i+1} = 1, else as a new run); partial compaction, when both
//!    levels hold one run, moves one file chosen by the file-picking rule, merged with the overlapping files.
//!    Hybrid compaction is full on the first `full_compaction_levels` levels and partial below.
//!
//! LSH-like designs (T larger than the data can reach) have one level that never fills by bytes.

pub use crate::tree_view::{FileShape, FileView, LevelShape, LevelView, RunShape, RunView};
use crate::{Compaction, Design, FilePicking, RunStrategy};

/// What to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The tree is in shape.
    Nothing,
    /// Merge whole runs.
    MergeRuns {
        /// Source level (1-based).
        level: usize,
        /// Runs of the source level to merge (adjacent, newest first).
        runs: Vec<u64>,
        /// Target level (1-based): `level` for in-place merges, `level + 1` to push down.
        target: usize,
        /// A run of the target level to merge with (leveling below), if any.
        into: Option<u64>,
        /// Tombstones can be dropped (nothing older lies below the output).
        drop_tombstones: bool,
    },
    /// Partial compaction: one file of `level` merged with the overlapping files of `level + 1`'s only run.
    MergeFile {
        /// Source level (1-based).
        level: usize,
        /// Source run.
        run: u64,
        /// The file moved down.
        file: u64,
        /// The target run at `level + 1` (None: the level is empty, the file moves as a new run).
        into: Option<u64>,
        /// Files of the target run that overlap the moved file.
        overlapping: Vec<u64>,
        /// Tombstones can be dropped.
        drop_tombstones: bool,
    },
}

/// The planner's reading of a design.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    /// T.
    pub size_ratio: f64,
    /// K.
    pub hot_runs: usize,
    /// Z.
    pub cold_runs: usize,
    /// Bytes of one flush, M_B/2 ([`Design::flush_bytes`]): the base of the level capacities.
    pub flush_bytes: u64,
    /// Compaction kind.
    pub compaction: Compaction,
    /// Run strategy.
    pub run_strategy: RunStrategy,
    /// File picking.
    pub file_picking: FilePicking,
    /// Merge threshold.
    pub merge_threshold: f64,
    /// Levels using full compaction under hybrid compaction.
    pub full_levels: usize,
    /// Number of hot levels (levels below are cold and hold up to Z runs).
    pub hot_levels: usize,
}

impl Policy {
    /// The policy of a design with `hot_levels` hot levels.
    pub fn of(design: &Design, hot_levels: usize) -> Self {
        Policy {
            size_ratio: design.size_ratio as f64,
            hot_runs: design.hot_runs as usize,
            cold_runs: design.cold_runs as usize,
            flush_bytes: design.flush_bytes(),
            compaction: design.compaction,
            run_strategy: design.run_strategy,
            file_picking: design.file_picking,
            merge_threshold: design.merge_threshold,
            full_levels: design.full_compaction_levels as usize,
            hot_levels,
        }
    }

    /// Capacity of level `i` in bytes: (M_B/2)·T^i, a flush's bytes times T^i.
    pub fn capacity(&self, i: usize) -> f64 {
        self.flush_bytes as f64 * self.size_ratio.powi(i as i32)
    }

    /// Runs allowed at level `i` of a tree whose deepest level is `depth`.
    pub fn run_limit(&self, i: usize, depth: usize) -> usize {
        if i >= depth.max(1) || i > self.hot_levels {
            self.cold_runs
        } else {
            self.hot_runs
        }
    }

    fn full_at(&self, i: usize) -> bool {
        self.compaction.merges_whole(i, self.full_levels)
    }
}

/// Where fence pointers live: how many levels count as hot (for the planner's K and Z), per level how many of
/// its newest runs keep their fences (and filters) in memory, and the first run that did not fit whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Residency {
    /// Levels that count as hot, from the top: every level when all fences fit (plus a margin, so a level
    /// the tree grows next is hot too), else up to the level of the first run that did not fit, that level
    /// included when it kept a run resident.
    pub hot_levels: usize,
    /// Per level, its newest runs whose fences are resident.
    pub resident_runs: Vec<usize>,
    /// The first run that did not fit whole: (level index, run index, its leading files that do fit). A
    /// level's last run is often most of the data; keeping part of its fences in memory saves the index block
    /// on that part of the lookups, instead of none.
    pub partial: Option<(usize, usize, usize)>,
}

/// Which runs keep their fence pointers in `fence_budget` bytes: walking the levels from the top and each
/// level's runs newest first, every run whose fences (`fence_bytes` of each of its files) fit in what is left,
/// up to the first that does not (of which the leading files that fit, in key order). A level outgrowing its
/// share between merges so loses only its oldest runs' fences, not all of them. The engine decides its hot
/// levels and its resident files by this; the cost model's simulated load decides its hot levels by it too.
pub fn residency<L: LevelShape>(
    levels: &[L],
    fence_budget: u64,
    fence_bytes: impl Fn(&<L::Run as RunShape>::File) -> u64,
) -> Residency {
    let mut resident_runs = vec![0; levels.len()];
    let mut left = fence_budget;
    for (i, level) in levels.iter().enumerate() {
        for (j, run) in level.runs().iter().enumerate() {
            let need: u64 = run.files().iter().map(&fence_bytes).sum();
            if need > left {
                let hot_levels = i + usize::from(resident_runs[i] > 0);
                let fit = run
                    .files()
                    .iter()
                    .scan(left, |room, f| {
                        let b = fence_bytes(f);
                        (b <= *room).then(|| *room -= b)
                    })
                    .count();
                return Residency {
                    hot_levels,
                    resident_runs,
                    partial: (fit > 0).then_some((i, j, fit)),
                };
            }
            left -= need;
            resident_runs[i] += 1;
        }
    }
    Residency {
        hot_levels: levels.len().max(1) + 8,
        resident_runs,
        partial: None,
    }
}

/// The window of `count` adjacent runs (of `runs`, newest first) that the run strategy picks.
fn pick_window<R: RunShape>(runs: &[R], count: usize, strategy: RunStrategy) -> Vec<u64> {
    let n = runs.len();
    let count = count.clamp(1, n);
    let start = match strategy {
        RunStrategy::LastFull => 0,
        RunStrategy::Fullest => (0..=n - count)
            .max_by_key(|&s| runs[s..s + count].iter().map(|r| r.bytes()).sum::<u64>())
            .unwrap_or(n - count),
        RunStrategy::First | RunStrategy::None => n - count,
    };
    runs[start..start + count].iter().map(|r| r.id()).collect()
}

fn key_span(f: &impl FileShape) -> u128 {
    let prefix = |k: &[u8]| {
        let mut b = [0u8; 16];
        for (i, x) in k.iter().take(16).enumerate() {
            b[i] = *x;
        }
        u128::from_be_bytes(b)
    };
    prefix(f.max_key()).saturating_sub(prefix(f.min_key()))
}

/// Decides the next compaction.
pub fn plan<L: LevelShape>(levels: &[L], p: &Policy) -> Plan {
    let depth = levels
        .iter()
        .rposition(|l| !l.runs().is_empty())
        .map_or(0, |i| i + 1);
    for i in 1..=depth {
        let level = levels[i - 1].runs();
        if level.is_empty() {
            continue;
        }
        let limit = p.run_limit(i, depth).max(1);
        let last = i == depth;
        let below_empty = levels.iter().skip(i).all(|l| l.runs().is_empty());
        // bytes at which the level is pushed down
        let push_at = p.capacity(i) * p.merge_threshold;
        let bytes: u64 = level.iter().map(|r| r.bytes()).sum();
        let full = bytes as f64 >= push_at;
        // rule 1: too many runs. A leveled level that full compaction merges whole, and whose oldest run (the
        // merged one) is full by bytes on its own, goes down with all its runs at once: merging them in place
        // first would write the level twice and leave it over its capacity (a flush lands while each in-place
        // merge runs, so the runs rule would otherwise keep firing first). Only the merged run counts: new
        // runs may repeat its keys (updates), and a level whose distinct keys stay under its capacity must
        // not be pushed for them. Partial compaction moves one file of one run, so it merges first.
        let oldest_full = level.last().is_some_and(|r| r.bytes() as f64 >= push_at);
        if limit == 1 && level.len() > 1 && oldest_full && p.full_at(i) {
            return push_down(levels, p, i, depth);
        }
        if limit == 1 && level.len() > 1 {
            return Plan::MergeRuns {
                level: i,
                runs: level.iter().map(|r| r.id()).collect(),
                target: i,
                into: None,
                drop_tombstones: below_empty,
            };
        }
        if limit > 1 && level.len() >= limit && !(last && level.len() == limit) {
            if last {
                let runs = pick_window(level, level.len() - limit + 1, p.run_strategy);
                let all = runs.len() == level.len();
                return Plan::MergeRuns {
                    level: i,
                    runs,
                    target: i,
                    into: None,
                    drop_tombstones: all && below_empty,
                };
            }
            return push_down(levels, p, i, depth);
        }
        // rule 2: too many bytes
        if full {
            return push_down(levels, p, i, depth);
        }
    }
    Plan::Nothing
}

fn push_down<L: LevelShape>(levels: &[L], p: &Policy, i: usize, depth: usize) -> Plan {
    let level = levels[i - 1].runs();
    let next = levels.get(i).map_or(&[][..], |l| l.runs());
    let next_depth = depth.max(i + 1);
    let next_limit = p.run_limit(i + 1, next_depth).max(1);
    let below_next_empty = levels.iter().skip(i + 1).all(|l| l.runs().is_empty());
    if !p.full_at(i) && level.len() == 1 && next.len() <= 1 && next_limit == 1 {
        let run = &level[0];
        let chosen = match p.file_picking {
            FilePicking::Oldest => run.files().iter().min_by_key(|f| f.id()),
            FilePicking::DenseFp => run.files().iter().min_by_key(|f| key_span(*f)),
            FilePicking::SparseFp => run.files().iter().max_by_key(|f| key_span(*f)),
            FilePicking::ChooseFirst => run.files().first(),
        };
        if let Some(f) = chosen {
            let (into, overlapping) = match next.first() {
                Some(target) => (
                    Some(target.id()),
                    target
                        .files()
                        .iter()
                        .filter(|g| g.max_key() >= f.min_key() && g.min_key() <= f.max_key())
                        .map(|g| g.id())
                        .collect(),
                ),
                None => (None, Vec::new()),
            };
            return Plan::MergeFile {
                level: i,
                run: run.id(),
                file: f.id(),
                into,
                overlapping,
                drop_tombstones: below_next_empty,
            };
        }
    }
    let into = if next_limit == 1 {
        next.first().map(|r| r.id())
    } else {
        None
    };
    // the output replaces everything at the target level only when that level holds at most the one run it
    // merges into (a design reopened with fewer runs per level can leave several there: the older ones still
    // hold values a tombstone must keep shadowing)
    let whole_target = (into.is_some() && next.len() <= 1) || next.is_empty();
    Plan::MergeRuns {
        level: i,
        runs: level.iter().map(|r| r.id()).collect(),
        target: i + 1,
        into,
        drop_tombstones: whole_target && below_next_empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: u64, bytes: u64) -> RunView {
        RunView {
            id,
            files: vec![FileView {
                id,
                bytes,
                min_key: vec![0],
                max_key: vec![255],
            }],
        }
    }

    fn policy(k: usize, z: usize, c: Compaction) -> Policy {
        Policy {
            size_ratio: 4.0,
            hot_runs: k,
            cold_runs: z,
            flush_bytes: 100,
            compaction: c,
            run_strategy: RunStrategy::First,
            file_picking: FilePicking::Oldest,
            merge_threshold: 1.0,
            full_levels: 1,
            hot_levels: 10,
        }
    }

    #[test]
    fn leveling_merges_in_place_then_pushes() {
        let p = policy(1, 1, Compaction::Full);
        let l = vec![vec![run(2, 100), run(1, 100)]];
        assert!(matches!(
            plan(&l, &p),
            Plan::MergeRuns {
                level: 1,
                target: 1,
                drop_tombstones: true,
                ..
            }
        ));
        let l = vec![vec![run(3, 450)], vec![run(1, 500)]];
        assert_eq!(
            plan(&l, &p),
            Plan::MergeRuns {
                level: 1,
                runs: vec![3],
                target: 2,
                into: Some(1),
                drop_tombstones: true
            }
        );
        let l = vec![vec![run(3, 100)], vec![run(1, 500)]];
        assert_eq!(plan(&l, &p), Plan::Nothing);
    }

    #[test]
    fn a_full_leveled_level_of_several_runs_goes_down_whole() {
        // capacity of level 1: 100 · 4 = 400 bytes; a flush (run 4) landed on a level already full
        let l = vec![vec![run(4, 100), run(3, 420)], vec![run(1, 1000)]];
        let full = policy(1, 1, Compaction::Full);
        assert_eq!(
            plan(&l, &full),
            Plan::MergeRuns {
                level: 1,
                runs: vec![4, 3],
                target: 2,
                into: Some(1),
                drop_tombstones: true
            }
        );
        // below its capacity the runs merge in place, and so they do when only the new run takes the level
        // over it (it may repeat the merged run's keys)
        for merged in [200, 350] {
            let l = vec![vec![run(4, 100), run(3, merged)], vec![run(1, 1000)]];
            assert!(
                matches!(
                    plan(&l, &full),
                    Plan::MergeRuns {
                        level: 1,
                        target: 1,
                        ..
                    }
                ),
                "{merged}"
            );
        }
        // partial compaction moves one file of one run: it merges the runs first
        let l = vec![vec![run(4, 100), run(3, 420)], vec![run(1, 1000)]];
        let partial = policy(1, 1, Compaction::Partial);
        assert!(matches!(
            plan(&l, &partial),
            Plan::MergeRuns {
                level: 1,
                target: 1,
                ..
            }
        ));
    }

    #[test]
    fn tombstones_stay_when_the_target_level_keeps_older_runs() {
        // a tree written with Z = 4 reopened with Z = 1: level 2 still holds three runs
        let l = vec![
            vec![run(9, 450)],
            vec![run(3, 500), run(2, 500), run(1, 500)],
        ];
        let p = policy(1, 1, Compaction::Full);
        match plan(&l, &p) {
            Plan::MergeRuns {
                level: 1,
                target: 2,
                into: Some(3),
                drop_tombstones,
                ..
            } => assert!(!drop_tombstones, "older runs of level 2 would resurface"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tiering_pushes_a_full_level() {
        let p = policy(3, 3, Compaction::Full);
        let l = vec![vec![run(3, 100), run(2, 100)], vec![run(1, 100)]];
        assert_eq!(plan(&l, &p), Plan::Nothing);
        let l = vec![
            vec![run(4, 100), run(3, 100), run(2, 100)],
            vec![run(1, 100)],
        ];
        assert_eq!(
            plan(&l, &p),
            Plan::MergeRuns {
                level: 1,
                runs: vec![4, 3, 2],
                target: 2,
                into: None,
                drop_tombstones: false
            }
        );
    }

    #[test]
    fn partial_moves_one_file() {
        let p = policy(1, 1, Compaction::Partial);
        let src = RunView {
            id: 5,
            files: vec![
                FileView {
                    id: 7,
                    bytes: 300,
                    min_key: vec![1],
                    max_key: vec![2],
                },
                FileView {
                    id: 6,
                    bytes: 300,
                    min_key: vec![3],
                    max_key: vec![9],
                },
            ],
        };
        let dst = RunView {
            id: 1,
            files: vec![
                FileView {
                    id: 2,
                    bytes: 300,
                    min_key: vec![0],
                    max_key: vec![1],
                },
                FileView {
                    id: 3,
                    bytes: 300,
                    min_key: vec![5],
                    max_key: vec![6],
                },
            ],
        };
        let l = vec![vec![src], vec![dst]];
        assert_eq!(
            plan(&l, &p),
            Plan::MergeFile {
                level: 1,
                run: 5,
                file: 6,
                into: Some(1),
                overlapping: vec![3],
                drop_tombstones: true
            }
        );
    }

    #[test]
    fn run_strategy_windows() {
        let runs = vec![run(5, 10), run(4, 50), run(3, 40), run(2, 5), run(1, 5)];
        assert_eq!(pick_window(&runs, 2, RunStrategy::First), vec![2, 1]);
        assert_eq!(pick_window(&runs, 2, RunStrategy::LastFull), vec![5, 4]);
        assert_eq!(pick_window(&runs, 2, RunStrategy::Fullest), vec![4, 3]);
    }
}
