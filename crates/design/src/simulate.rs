//! Plans applied to a tree's shape without data: [`apply`] is the pure counterpart of the compaction mechanism
//! (`cosine_levels::compaction::execute`), so a test (or the cost model) can flush any number of buffers through [`crate::planner::plan`]
//! and `apply` in microseconds and compare the tree that results with the one the cost model prices.
//!
//! Keys are taken as 64-bit numbers (a file's first 8 key bytes, big-endian); the data is unique keys spread
//! evenly, so a merge's output holds the sum of its inputs' data bytes, cut into files of at most
//! [`Files::data_bytes`] over its key range, each file also carrying [`Files::overhead`] bytes (its footer, meta
//! and top index: the planner weighs whole files).

use crate::planner::{FileView, LevelView, Plan, RunView};

/// Ids for the runs and files a simulation creates.
#[derive(Debug, Default)]
pub struct Ids(u64);

impl Ids {
    /// Ids above every id in use.
    pub fn after(levels: &[LevelView]) -> Self {
        let max = levels
            .iter()
            .flatten()
            .flat_map(|r| std::iter::once(r.id).chain(r.files.iter().map(|f| f.id)))
            .max()
            .unwrap_or(0);
        Ids(max + 1)
    }

    /// The next id (increasing: a newer file has a larger id, as in the engine).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

/// A key bound as a key (8 bytes, big-endian).
pub fn key(k: u64) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}

fn num(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    for (i, x) in k.iter().take(8).enumerate() {
        b[i] = *x;
    }
    u64::from_be_bytes(b)
}

/// How outputs are cut into files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Files {
    /// Data bytes a file holds at most.
    pub data_bytes: u64,
    /// Bytes every file carries besides its data (`crate::shape::run_file_overhead_bytes`).
    pub overhead: u64,
}

impl Files {
    /// Files of at most `data_bytes` and no overhead.
    pub fn of(data_bytes: u64) -> Self {
        Files {
            data_bytes,
            overhead: 0,
        }
    }
}

/// A run of `bytes` of data over keys `lo..=hi`, cut into files as the engine's writer cuts them: full files
/// of [`Files::data_bytes`], then the rest (one file at least), each over its share of the range.
pub fn run_over(ids: &mut Ids, bytes: u64, lo: u64, hi: u64, cut: Files) -> RunView {
    let full = cut.data_bytes.max(1);
    let files = bytes.div_ceil(full).max(1);
    let span = hi.saturating_sub(lo) as u128 + 1;
    let total = bytes.max(1) as u128;
    let run_id = ids.next();
    let files = (0..files)
        .map(|i| {
            let start = (i * full).min(bytes) as u128;
            let end = ((i + 1) * full).min(bytes) as u128;
            let a = (lo as u128 + span * start / total) as u64;
            let b = (lo as u128 + (span * end / total).max(1) - 1) as u64;
            FileView {
                id: ids.next(),
                bytes: (end - start) as u64 + cut.overhead,
                min_key: key(a),
                max_key: key(b.max(a)),
            }
        })
        .collect();
    RunView { id: run_id, files }
}

/// What a file's data is made of, for a simulation of writes after a load, where a merge keeps one version of
/// each key: the share of its key range's keys the load put in it (the load's keys are distinct, so these
/// shares add up when files merge) and the writes since per key of its range (which add up too; the keys they
/// reach overlap, the hot ones most).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mix {
    /// Share of the keys in the file's range that the load put in it.
    pub loaded: f64,
    /// Writes per key of the file's range (each write's key drawn from the workload's distribution).
    pub written: f64,
}

/// Merges that keep one version of each key: every file's [`Mix`] by id, and how its bytes follow from it.
/// A file the map does not know holds load data alone, at its bytes' share of the full density.
pub struct Versions {
    /// Each file's make-up, by file id.
    pub mixes: std::collections::HashMap<u64, Mix>,
    /// Data bytes per unit of the key line when every key is present (the whole data set over it).
    pub full: f64,
    /// The share of the keys that `w` writes per key reach at least once (the workload's distribution decides
    /// how much they overlap).
    pub reached: Box<dyn Fn(f64) -> f64>,
    /// Bytes the merges have read and written (a file moved down as it is costs nothing).
    pub io: (u64, u64),
}

impl Versions {
    /// Data bytes per unit of the key line of data made of `m`: the keys the load put there or a write
    /// reached (a key the load holds and a write reached is there once). A file's make-up is its mean over
    /// its range, so a merge may sum shares of the load's keys above 1 where one input's come from beyond
    /// the other's range: they are kept (the load's keys are never lost), at the full density and above.
    fn density(&self, m: Mix) -> f64 {
        let loaded = m.loaded.max(0.0);
        let reached = (self.reached)(m.written.max(0.0)).clamp(0.0, 1.0);
        self.full * (loaded + reached * (1.0 - loaded).max(0.0))
    }

    /// The make-up of `f`, which holds `data` bytes over `width` units of the key line.
    fn mix_of(&self, f: &FileView, data: f64, width: f64) -> Mix {
        self.mixes.get(&f.id).copied().unwrap_or(Mix {
            loaded: data / (self.full * width).max(f64::MIN_POSITIVE),
            written: 0.0,
        })
    }
}

/// The run a merge of `inputs` writes: their data, each file's spread evenly over its key range, cut into
/// files as the engine's writer cuts them, by bytes in key order (a file spans the keys its bytes hold, so a
/// key range no input holds lies between files, not in one). A level that partial compaction empties from one
/// end keeps its data where it is: the merged run covers what its inputs covered, not their whole span. The
/// data is summed where the ranges overlap (unique keys, as a load writes them), or with `versions` made of
/// what the inputs are made of, one version a key.
fn merged_run(
    ids: &mut Ids,
    inputs: &[FileView],
    cut: Files,
    mut versions: Option<&mut Versions>,
) -> Option<RunView> {
    // (data bytes, lo, hi, make-up) of each input with data; hi exclusive, as positions on the key line
    let segs: Vec<(f64, f64, f64, Mix)> = inputs
        .iter()
        .filter_map(|f| {
            let data = f.bytes.saturating_sub(cut.overhead);
            // (a key converts to f64 to within its 53 bits: above 2^53 adding one may add nothing, and a
            // file's span must stay wider than none for its data to lie somewhere)
            let (lo, hi) = (num(&f.min_key) as f64, num(&f.max_key) as f64 + 1.0);
            let hi = hi.max(lo.next_up());
            let mix = versions
                .as_deref()
                .map_or(Mix::default(), |v| v.mix_of(f, data as f64, hi - lo));
            (data > 0).then_some((data as f64, lo, hi, mix))
        })
        .collect();
    if segs.is_empty() {
        return None;
    }
    // the data between consecutive breakpoints: (lo, hi, bytes, make-up), the inputs' summed over it
    let mut points: Vec<f64> = segs.iter().flat_map(|s| [s.1, s.2]).collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    let pieces: Vec<(f64, f64, f64, Mix)> = points
        .windows(2)
        .map(|w| {
            let over = segs.iter().filter(|s| s.1 <= w[0] && w[1] <= s.2);
            let (mut density, mut mix) = (0.0, Mix::default());
            for s in over {
                density += s.0 / (s.2 - s.1);
                mix.loaded += s.3.loaded;
                mix.written += s.3.written;
            }
            if let Some(v) = versions.as_deref() {
                density = v.density(mix);
            }
            (w[0], w[1], density * (w[1] - w[0]), mix)
        })
        .filter(|p| p.2 > 0.0)
        .collect();
    // (every input spans at least one window between breakpoints, so a piece holds its data)
    debug_assert!(!pieces.is_empty());
    let total = match versions {
        Some(_) => pieces.iter().map(|p| p.2).sum::<f64>().round().max(1.0) as u64,
        None => inputs
            .iter()
            .map(|f| f.bytes.saturating_sub(cut.overhead))
            .sum(),
    };
    let full = cut.data_bytes.max(1);
    let files = total.div_ceil(full).max(1);
    if let Some(v) = versions.as_deref_mut() {
        v.io.0 += inputs.iter().map(|f| f.bytes).sum::<u64>();
        v.io.1 += total + files * cut.overhead;
    }
    let run_id = ids.next();
    let mut out = Vec::with_capacity(files as usize);
    // walk the pieces, cutting a file every `full` bytes (the last takes the rest); `made` sums the make-up
    // of what a file takes over the key line it takes, and that line
    let (mut piece, mut used) = (0usize, 0.0f64);
    let key_at = |x: f64| x.clamp(0.0, u64::MAX as f64) as u64;
    for i in 0..files {
        let want = if i + 1 == files {
            total - i * full
        } else {
            full
        } as f64;
        let (start_piece, start_used) = (piece, used);
        let mut need = want;
        let mut made = (0.0, 0.0, 0.0);
        let mut take = |k: usize, bytes: f64| {
            let (lo, hi, all, mix) = pieces[k];
            let width = (hi - lo) * (bytes / all).clamp(0.0, 1.0);
            made.0 += mix.loaded * width;
            made.1 += mix.written * width;
            made.2 += width;
        };
        while piece < pieces.len() {
            let left = pieces[piece].2 - used;
            if left >= need && i + 1 < files {
                take(piece, need);
                used += need;
                break;
            }
            take(piece, left);
            need -= left;
            piece += 1;
            used = 0.0;
        }
        // (a file that ends where its piece ends leaves the next to start at the next piece, past any gap)
        let (start_piece, start_used) =
            if start_piece < pieces.len() && start_used >= pieces[start_piece].2 {
                (start_piece + 1, 0.0)
            } else {
                (start_piece, start_used)
            };
        let (a, b) = (
            start_piece.min(pieces.len() - 1),
            piece.min(pieces.len() - 1),
        );
        let at = |k: usize, u: f64| {
            let (lo, hi, bytes, _) = pieces[k];
            lo + (hi - lo) * (u / bytes).clamp(0.0, 1.0)
        };
        let lo = key_at(at(a, start_used));
        let hi = if piece >= pieces.len() {
            key_at(pieces[pieces.len() - 1].1 - 1.0)
        } else {
            key_at(at(b, used) - 1.0)
        };
        let id = ids.next();
        if let Some(v) = versions.as_deref_mut() {
            let width = made.2.max(f64::MIN_POSITIVE);
            v.mixes.insert(
                id,
                Mix {
                    loaded: made.0 / width,
                    written: made.1 / width,
                },
            );
        }
        out.push(FileView {
            id,
            bytes: want as u64 + cut.overhead,
            min_key: key(lo),
            max_key: key(hi.max(lo)),
        });
    }
    Some(RunView {
        id: run_id,
        files: out,
    })
}

/// The shape after `plan` is carried out on `levels` (levels top first, runs newest first), with outputs cut
/// into files as `cut` says.
pub fn apply(plan: &Plan, levels: &[LevelView], cut: Files, ids: &mut Ids) -> Vec<LevelView> {
    apply_with(plan, levels, cut, ids, None)
}

/// [`apply`] where each merge keeps one version of a key, its output made of what its inputs are made of
/// (`versions`, which learns the make-up of every file the plan writes).
pub fn apply_keeping_versions(
    plan: &Plan,
    levels: &[LevelView],
    cut: Files,
    ids: &mut Ids,
    versions: &mut Versions,
) -> Vec<LevelView> {
    apply_with(plan, levels, cut, ids, Some(versions))
}

fn apply_with(
    plan: &Plan,
    levels: &[LevelView],
    cut: Files,
    ids: &mut Ids,
    mut versions: Option<&mut Versions>,
) -> Vec<LevelView> {
    let mut out = levels.to_vec();
    match plan {
        Plan::Nothing => {}
        Plan::MergeRuns {
            level,
            runs,
            target,
            into,
            ..
        } => {
            let (l, t) = (level - 1, target - 1);
            if out.len() <= t {
                out.resize(t + 1, Vec::new());
            }
            // where the output goes: in place of the newest merged run, or of the target run it absorbs, or
            // as the target level's newest run
            let at = if l == t {
                out[l].iter().position(|r| runs.contains(&r.id))
            } else {
                into.and_then(|id| out[t].iter().position(|r| r.id == id))
            }
            .unwrap_or(0);
            let mut inputs: Vec<FileView> = Vec::new();
            out[l].retain(|r| {
                let merged = runs.contains(&r.id);
                if merged {
                    inputs.extend(r.files.iter().cloned());
                }
                !merged
            });
            if let Some(id) = into {
                out[t].retain(|r| {
                    let merged = r.id == *id;
                    if merged {
                        inputs.extend(r.files.iter().cloned());
                    }
                    !merged
                });
            }
            if let Some(run) = merged_run(ids, &inputs, cut, versions.as_deref_mut()) {
                let at = at.min(out[t].len());
                out[t].insert(at, run);
            }
        }
        Plan::MergeFile {
            level,
            run,
            file,
            into,
            overlapping,
            ..
        } => {
            let (l, t) = (level - 1, *level);
            if out.len() <= t {
                out.resize(t + 1, Vec::new());
            }
            let mut moved = Vec::new();
            for r in out[l].iter_mut().filter(|r| r.id == *run) {
                r.files.retain(|f| {
                    let m = f.id == *file;
                    if m {
                        moved.push(f.clone());
                    }
                    !m
                });
            }
            out[l].retain(|r| !r.files.is_empty());
            // (a file that overlaps nothing below moves down as it is, keeping its id, as the engine moves it:
            // only its metadata changes)
            let merged = |moved: &[FileView], ids: &mut Ids, versions: Option<&mut Versions>| {
                if moved.len() == 1 {
                    Some(RunView {
                        id: ids.next(),
                        files: moved.to_vec(),
                    })
                } else {
                    merged_run(ids, moved, cut, versions)
                }
            };
            match into.and_then(|id| out[t].iter_mut().find(|r| r.id == id)) {
                Some(target) => {
                    target.files.retain(|f| {
                        let m = overlapping.contains(&f.id);
                        if m {
                            moved.push(f.clone());
                        }
                        !m
                    });
                    if let Some(r) = merged(&moved, ids, versions.as_deref_mut()) {
                        target.files.extend(r.files);
                        target.files.sort_by(|a, b| a.min_key.cmp(&b.min_key));
                    }
                }
                None => {
                    if let Some(r) = merged(&moved, ids, versions) {
                        out[t].insert(0, r);
                    }
                }
            }
        }
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::{plan, Policy};
    use crate::{Compaction, Design, FilePicking, RunStrategy};

    #[test]
    fn a_merge_keeps_its_inputs_data_where_it_lies() {
        // two files of 1,000 bytes over [0, 999] and [10,000, 10,999], and one of 2,000 over [0, 10,999]: the
        // merge holds 4,000 bytes, cut into 1,000-byte files by key order, narrow where the data is dense (the
        // two ends) and wide over the stretch between, which holds only the wide file's sparse data
        let mut ids = Ids::default();
        let file = |ids: &mut Ids, bytes: u64, lo: u64, hi: u64| FileView {
            id: ids.next(),
            bytes,
            min_key: key(lo),
            max_key: key(hi),
        };
        let inputs = vec![
            file(&mut ids, 1000, 0, 999),
            file(&mut ids, 1000, 10_000, 10_999),
            file(&mut ids, 2000, 0, 10_999),
        ];
        let run = merged_run(&mut ids, &inputs, Files::of(1000), None).unwrap();
        assert_eq!(run.files.iter().map(|f| f.bytes).sum::<u64>(), 4000);
        assert_eq!(run.files.len(), 4);
        let span = |f: &FileView| (num(&f.min_key), num(&f.max_key));
        // the dense ends: [0, 999] holds 1,000 + 182 bytes, [10,000, 10,999] as much; the middle 1,636
        let (first, last) = (span(&run.files[0]), span(&run.files[3]));
        assert_eq!(first.0, 0);
        assert!(first.1 < 999, "{first:?}");
        assert!(last.0 > 10_000 && last.1 == 10_999, "{last:?}");
        // files in key order, not overlapping
        assert!(run.files.windows(2).all(|w| span(&w[0]).1 < span(&w[1]).0));
    }

    #[test]
    fn a_merge_of_files_narrower_than_an_f64_step_keeps_its_data() {
        // keys near 2^62 are 1,024 apart as f64s: files of one key each (and of a few keys, overlapping) still
        // merge into a run holding all their bytes, in key order
        let mut ids = Ids::default();
        let base = 1u64 << 62;
        let mut inputs = Vec::new();
        for (i, (lo, hi)) in [(0, 0), (0, 0), (1, 1), (5, 300), (200, 2000)]
            .into_iter()
            .enumerate()
        {
            inputs.push(FileView {
                id: ids.next(),
                bytes: 1000 + 100 * i as u64,
                min_key: key(base + lo),
                max_key: key(base + hi),
            });
        }
        let run = merged_run(&mut ids, &inputs, Files::of(1000), None).unwrap();
        assert_eq!(run.files.iter().map(|f| f.bytes).sum::<u64>(), 6000);
        let span = |f: &FileView| (num(&f.min_key), num(&f.max_key));
        assert!(run.files.iter().all(|f| span(f).0 <= span(f).1));
        assert!(run.files.windows(2).all(|w| span(&w[0]).1 <= span(&w[1]).0));
        assert!(run
            .files
            .iter()
            .all(|f| span(f).0 >= base && span(f).1 <= base + 4096));
    }

    #[test]
    fn a_merge_keeping_versions_holds_each_key_once() {
        // the key line 0..1,000,000 at 1 byte a key when every key is present; a write reaches a key as if
        // uniformly: w writes per key reach 1 − e^{−w} of the keys
        let versions = || Versions {
            mixes: Default::default(),
            full: 1.0,
            reached: Box::new(|w: f64| -(-w).exp_m1()),
            io: (0, 0),
        };
        let file = |ids: &mut Ids, bytes: u64, lo: u64, hi: u64| FileView {
            id: ids.next(),
            bytes,
            min_key: key(lo),
            max_key: key(hi),
        };
        let total = |r: &RunView| r.files.iter().map(|f| f.bytes).sum::<u64>();
        // the load's keys (every key of the range) and a flush of updates to 10% of them: the load's bytes
        let (mut ids, mut v) = (Ids::default(), versions());
        let load = file(&mut ids, 1_000_000, 0, 999_999);
        let flush = file(&mut ids, 95_163, 0, 999_999);
        v.mixes.insert(
            flush.id,
            Mix {
                loaded: 0.0,
                written: 0.1,
            },
        );
        let run = merged_run(&mut ids, &[load, flush], Files::of(1 << 30), Some(&mut v)).unwrap();
        assert_eq!(total(&run), 1_000_000);
        // two flushes of 0.1 writes a key each reach 1 − e^{−0.2} of the keys, not twice 1 − e^{−0.1}
        let (mut ids, mut v) = (Ids::default(), versions());
        let flushes: Vec<FileView> = (0..2)
            .map(|_| {
                let f = file(&mut ids, 95_163, 0, 999_999);
                v.mixes.insert(
                    f.id,
                    Mix {
                        loaded: 0.0,
                        written: 0.1,
                    },
                );
                f
            })
            .collect();
        let run = merged_run(&mut ids, &flushes, Files::of(40_000), Some(&mut v)).unwrap();
        assert!(
            (total(&run) as f64 - 181_269.0).abs() < 2.0,
            "{}",
            total(&run)
        );
        assert!(run
            .files
            .iter()
            .all(|f| (v.mixes[&f.id].written - 0.2).abs() < 1e-9));
        // the load's keys are never lost, even where a file's mean share of them sums above 1 with another's
        let (mut ids, mut v) = (Ids::default(), versions());
        let inputs = [
            file(&mut ids, 600_000, 0, 999_999),
            file(&mut ids, 500_000, 0, 499_999),
        ];
        let run = merged_run(&mut ids, &inputs, Files::of(1 << 30), Some(&mut v)).unwrap();
        assert_eq!(total(&run), 1_100_000);
    }

    /// Flushes `n` buffers through plan and apply, each buffer a run over the whole key space, with the top
    /// `hot` levels hot (K runs) and the rest cold (Z runs).
    fn simulate(d: &Design, n: usize, hot: usize) -> Vec<LevelView> {
        let mut levels: Vec<LevelView> = Vec::new();
        let mut ids = Ids::default();
        for _ in 0..n {
            let run = run_over(
                &mut ids,
                d.flush_bytes(),
                0,
                u64::MAX,
                Files::of(d.file_bytes),
            );
            if levels.is_empty() {
                levels.push(Vec::new());
            }
            levels[0].insert(0, run);
            for step in 0.. {
                assert!(step < 10_000, "the planner never settles on {d:?}");
                let p = plan(&levels, &Policy::of(d, hot));
                if p == Plan::Nothing {
                    break;
                }
                levels = apply(&p, &levels, Files::of(d.file_bytes), &mut ids);
            }
        }
        levels
    }

    /// Checks the settled tree after `n` flushes; returns (the tree's depth, the model's level count).
    fn check(name: &str, d: &Design, n: usize, hot: usize) -> (usize, usize) {
        let levels = simulate(d, n, hot);
        let data = n as f64 * d.flush_bytes() as f64;
        let bytes: u64 = levels
            .iter()
            .flatten()
            .flat_map(|r| &r.files)
            .map(|f| f.bytes)
            .sum();
        assert_eq!(bytes as f64, data, "{name}: a merge lost or made bytes");
        // the model's tree: L = ⌈log_T(N·E / (θ·M_B/2))⌉ levels (crate::shape::level_count, with the
        // merge threshold θ as the cost model prices it), the last level sized to hold all the data. The
        // engine's levels above the last hold data too (with T = 2 as much as the last): the two may differ by
        // one level, never more
        let theta = d.merge_threshold.clamp(0.01, 1.0);
        let model = crate::shape::level_count(
            data,
            1.0,
            d.flush_bytes() as f64 * theta,
            d.size_ratio as f64,
        )
        .max(1) as usize;
        let depth = levels.len();
        assert!(
            depth + 1 >= model && depth <= model + 1,
            "{name}: {depth} levels, the model's tree has {model} (T = {}, {n} flushes)",
            d.size_ratio
        );
        let policy = Policy::of(d, hot);
        for (i, l) in levels.iter().enumerate() {
            let limit = policy.run_limit(i + 1, depth).max(1);
            assert!(
                l.len() <= limit,
                "{name}: level {} holds {} runs, the design allows {limit}",
                i + 1,
                l.len()
            );
            let cap = policy.capacity(i + 1);
            let held: u64 = l.iter().flat_map(|r| &r.files).map(|f| f.bytes).sum();
            if i + 1 < depth {
                assert!(
                    (held as f64) < cap * d.merge_threshold.max(1e-9) + 1.0,
                    "{name}: level {} holds {held} bytes, capacity {cap}",
                    i + 1
                );
            }
        }
        (depth, model)
    }

    fn presets() -> Vec<(&'static str, Design)> {
        let mib = 1u64 << 20;
        let mut partial = Design::wiredtiger_like(2 * mib, mib);
        partial.size_ratio = 8;
        let mut hybrid = Design::hybrid(4, 2 * mib, mib, mib);
        hybrid.full_compaction_levels = 1;
        vec![
            ("rocksdb-like", Design::rocksdb_like(2 * mib, mib, mib)),
            ("tiered", Design::tiered(4, 2 * mib, mib, mib)),
            ("btree-like", partial),
            ("hybrid", hybrid),
            ("lsh-like", Design::lsh_like(2 * mib, mib)),
        ]
    }

    #[test]
    fn flushed_buffers_settle_into_the_models_tree() {
        for (name, mut d) in presets() {
            d.file_bytes = 1 << 20;
            for n in [1, 3, 5, 17, 60, 150] {
                let (depth, model) = check(name, &d, n, usize::MAX);
                // the presets (T ≥ 4) settle into the model's depth exactly
                assert_eq!(depth, model, "{name}: {n} flushes");
            }
        }
    }

    #[test]
    fn random_designs_settle_into_the_models_tree() {
        // a small linear congruential generator: the designs are the same on every run
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        let mut differ = Vec::new();
        for case in 0..60 {
            let t = 2 + next(14);
            let mut d = Design::rocksdb_like(2 << 20, 1 << 20, 1 << 20);
            d.size_ratio = t;
            d.hot_runs = 1 + next(t - 1);
            d.cold_runs = 1 + next(t - 1);
            d.compaction =
                [Compaction::Full, Compaction::Partial, Compaction::Hybrid][next(3) as usize];
            d.full_compaction_levels = 1 + next(2) as u32;
            d.run_strategy = [
                RunStrategy::First,
                RunStrategy::LastFull,
                RunStrategy::Fullest,
            ][next(3) as usize];
            d.file_picking = [
                FilePicking::Oldest,
                FilePicking::DenseFp,
                FilePicking::SparseFp,
                FilePicking::ChooseFirst,
            ][next(4) as usize];
            d.merge_threshold = [0.5, 0.75, 1.0][next(3) as usize];
            d.file_bytes = [1u64 << 20, 2 << 20][next(2) as usize];
            d.validate().unwrap();
            let n = 1 + next(150) as usize;
            // every level hot (K runs above the last), or only level 1 (Z runs below it)
            let hot = [usize::MAX, 1][case % 2];
            let (depth, model) = check(&format!("random #{case} hot {hot} {d:?}"), &d, n, hot);
            // from T = 3 on the last level holds most of the data and the depths agree exactly
            assert!(
                t == 2 || depth == model,
                "random #{case} T={t}: {depth} levels against {model}"
            );
            if depth != model {
                differ.push(format!(
                    "T={t} {:?} thr {} N={n}: {depth} against {model}",
                    d.compaction, d.merge_threshold
                ));
            }
        }
        // where the engine's tree and the model's differ by a level (printed with --nocapture): T = 2, where
        // the upper levels hold as much as the last (an open finding of the model)
        eprintln!(
            "{} of 60 random designs differ from the model's level count by one:",
            differ.len()
        );
        for line in &differ {
            eprintln!("  {line}");
        }
    }
}
