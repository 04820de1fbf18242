//! Where an LSH design's versions lie by age ([`LshAges`]): the first level's fill cycle, the runs of the
//! levels below, the merged run, and which of them M_FP's hash indexes cover.

use crate::dist::residency::{stretches, RunSpread};
use crate::keys::{distinct_after, writes_to_fill, KeyPart, KeySpace};
use crate::layout::{self, DataShape};
use crate::probes::Probes;
use cosine_design::{Design, Workload};

/// Where an LSH design's versions lie by age, and which of them M_FP's hash indexes cover (our engine keeps
/// the newest runs' indexes resident, file by file, and reads the others through their on-disk index).
///
/// Every flushed run holds one buffer's entries (`eb`). Until the first merge (the load's runs and the writes
/// since, at most K runs) the runs hold every version written. Later, as the engine's planner keeps the tree:
/// - the first level holds the D entries written since its last push, D anywhere in 0..(K − 1)·eb (K runs
///   pushed down at once, merged; the first push comes at its capacity): where in that cycle the operations
///   priced find it follows from the entries flushed before and during them, when they run less than a
///   cycle; when it is the only level it is also the last, which keeps Z runs by merging its two oldest on
///   each flush: the newest Z − 1 flushes, D = (Z − 1)·eb, over the merged run;
/// - a level between the first and the last holds (K − 1)/2 runs on average, each the merge of K^{j−1}
///   flushes (their distinct keys);
/// - the last level holds the merged run of the N live entries and, when tiered (Z > 1), the Z − 1 newest
///   runs pushed into it above that run (the planner merges the oldest two on each arrival); with Z = 1 each
///   push merges into the one run.
///
/// The writes the store has seen are its operations (χ₀ + χ: those before the workload's and its own) times
/// the write share: inserts add keys (N counts them), updates leave older versions behind, one per key a
/// buffer kept, so update-heavy workloads keep more versions than keys and the oldest runs' indexes go cold.
#[derive(Clone, Debug)]
pub struct LshAges {
    /// Entries whose hash index fits M_FP (the newest).
    pub(in crate::dist) resident: f64,
    /// Entries per run (one buffer).
    pub(in crate::dist) eb: f64,
    /// N: live entries.
    pub(in crate::dist) entries: f64,
    /// Older versions the updates left, when no merge has happened yet (the load's runs are then runs of eb
    /// too).
    pub(in crate::dist) unmerged: Option<f64>,
    /// Longest stretch of entries written between the first level's pushes: (K − 1)·eb, or what was written
    /// if less (a long run on a freshly loaded store meets no more); with `fixed`, the stretch the first level
    /// always holds.
    pub(in crate::dist) cycle: f64,
    /// Entries the first level holds at most once it has been pushed down: (K − 1)·eb, its K-th run pushing
    /// it (the load's runs count: where a short stretch meets the cycle follows from every entry flushed).
    pub(in crate::dist) cap: f64,
    /// Entries the first level holds above its merged run before its first push, while it is the last level:
    /// its newest Z − 1 flushes.
    pub(in crate::dist) cap_before_push: f64,
    /// The first level is the last and keeps its newest Z − 1 flushes: its stretch does not cycle.
    pub(in crate::dist) fixed: bool,
    /// Runs below the first level and above the last level's merged run, newest first.
    pub(in crate::dist) segments: Vec<Segment>,
    /// Levels the runs fill.
    pub(in crate::dist) levels: u32,
    /// Entries a run keeps per update: a buffer keeps one version of a key however often it is written while
    /// the buffer fills, so skewed updates leave fewer versions than writes.
    pub(in crate::dist) kept: f64,
    /// Entries flushed since the store was made (the load's and the writes' kept), when the operations priced
    /// begin and when they end: where the first level is in its cycle while they run.
    pub(in crate::dist) flushed: (f64, f64),
    /// Records the load put (N less the keys inserted since): the load's runs hold them, one per key.
    pub(in crate::dist) loaded: f64,
    /// Entries flushed when the first level is first pushed down: while it is the only level it is the last,
    /// which merges its runs in place and is pushed by bytes alone, at its capacity.
    pub(in crate::dist) first_push: f64,
}

/// `f` over `phases` ([`LshAges::middle_phases`], each with its weight), or over `ages` at their mean where
/// there are none.
pub(in crate::dist) fn over_ages(
    ages: &LshAges,
    phases: &[(f64, LshAges)],
    f: impl Fn(&LshAges) -> f64,
) -> f64 {
    if phases.is_empty() {
        return f(ages);
    }
    phases.iter().map(|(w, a)| w * f(a)).sum()
}

/// Runs of one level of an LSH design's tree, below the first: how many (a mean may be fractional), the
/// writes each covers (in entries kept: the flushes merged into it, times eb) and the entries it holds (their
/// distinct keys).
#[derive(Clone, Copy, Debug)]
pub(in crate::dist) struct Segment {
    pub(in crate::dist) count: f64,
    pub(in crate::dist) age: f64,
    pub(in crate::dist) stored: f64,
    /// Share of the entries it holds that are live keys N counts, not versions beyond them (the load's
    /// records, the inserts), where the merged run below holds none of them.
    pub(in crate::dist) live: f64,
    /// The runs hold the load's records (one per key, in the order the load wrote them), not writes.
    pub(in crate::dist) load: bool,
    /// Runs at which the level is pushed down where it fills and empties over a cycle (a level between the
    /// first and the last that has been through its cycle: 0, 1, .., K − 1 runs alike); 0 for the last
    /// level's runs and for a level between whose runs the writes so far cap
    pub(in crate::dist) cycles_at: f64,
}

/// Points a merge cycle's stretch of recent writes is sampled at.
pub(in crate::dist) const CYCLE_SAMPLES: usize = 8;

/// Points the first level's fill is sampled at over operations that run less than a cycle.
pub(in crate::dist) const PHASE_SAMPLES: usize = 16;

/// Share of the entries flushed by which the model may miscount them (a flush's entries, the versions an
/// update keeps): the phase of a cycle is known to within it.
pub(in crate::dist) const PHASE_SLACK: f64 = 0.05;

/// Steps of the integral over a run stretch's ages.
pub(in crate::dist) const AGE_STEPS: usize = 32;

/// The writes an LSH design's log has taken, as [`LshAges::new`] lays its runs out by them: K runs before a
/// merge, Z at the last level, `eb` entries a flush, the share of an update's versions a buffer keeps, the
/// entries written (inserts and the versions the updates kept), the share of them that insert keys, the load's
/// records, and the first level's stretch.
struct LogFlow {
    k: f64,
    z: f64,
    eb: f64,
    kept: f64,
    written: f64,
    inserted: f64,
    loaded: f64,
    cycle: f64,
}

impl LogFlow {
    /// The runs below the first level when the runs fill `levels` levels, newest first, and the first level's
    /// stretch and whether it is fixed (`first`: the entries the first level holds on average while the
    /// operations run, not yet pushed below).
    fn layout(&self, levels: u32, first: f64, parts: &[KeyPart]) -> (Vec<Segment>, f64, bool) {
        let LogFlow {
            k,
            z,
            eb,
            kept,
            written,
            inserted,
            loaded,
            cycle,
        } = *self;
        // a run that merged `age` entries kept of writes holds their distinct keys
        let stored = |age: f64| age.min(distinct_after(parts, age / kept)).max(1.0);
        let mut segments = Vec::new();
        if levels <= 1 {
            let held = if z > 1.0 { (z - 1.0) * eb } else { 0.0 };
            return (segments, held.min(written), true);
        }
        for j in 2..levels {
            let age = k.powi(j as i32 - 1) * eb;
            // (until the level's first push, at its K-th run, it holds every run it was given)
            let cycled = written / age >= k;
            segments.push(Segment {
                count: if cycled {
                    (k - 1.0) / 2.0
                } else {
                    written / age
                },
                age,
                stored: stored(age),
                live: inserted,
                load: false,
                cycles_at: if cycled { k } else { 0.0 },
            });
        }
        if z > 1.0 {
            let age = k.powi(levels as i32 - 1) * eb;
            // the writes' runs: what was written and has left the first level
            let count = (z - 1.0).min((written - first).max(0.0) / age);
            segments.push(Segment {
                count,
                age,
                stored: stored(age),
                live: inserted,
                load: false,
                cycles_at: 0.0,
            });
            // the load's records were flushed as the writes are, into runs of the same age: those the last
            // level has not merged yet (it merges its oldest once it holds more than Z) lie between the writes'
            // runs and the merged run, one per key
            let load_runs = (z - 1.0 - count).min(loaded / age - 1.0);
            if load_runs > 0.0 {
                segments.push(Segment {
                    count: load_runs,
                    age,
                    stored: age,
                    live: 1.0,
                    load: true,
                    cycles_at: 0.0,
                });
            }
        }
        (segments, cycle, false)
    }
}

impl LshAges {
    /// The ages of `design`'s runs under `workload` (K = `k` runs before a merge, `eb` entries a run).
    pub fn new(
        design: &Design,
        workload: &Workload,
        shape: &DataShape,
        parts: &[KeyPart],
        eb: f64,
        k: f64,
    ) -> Self {
        let per_entry = layout::HASH_INDEX_BYTES_PER_KEY + 16.0 / shape.entries_per_block.max(1.0);
        let m = &workload.mix;
        let eb = eb.max(1.0);
        // the writes that fill one buffer with eb distinct keys (as many as eb when the universe is vast)
        let kept = writes_to_fill(parts, eb).map_or(1.0, |w| (eb / w.max(eb)).clamp(0.0, 1.0));
        let kept = if kept > 0.0 { kept } else { 1.0 };
        // (the state after every operation so far, the workload's and those before it)
        let ops = workload
            .operations_before
            .saturating_add(workload.operations) as f64;
        let obsolete = ops * (m.blind_update + m.rmw) * kept;
        let written = (ops * m.insert + obsolete).max(0.0);
        let n = shape.entries.max(1.0);
        // the records the load put (the live entries less the keys inserted since)
        let loaded = (n - ops * m.insert).max(0.0);
        // the share of the writes that insert keys (each a live entry N counts)
        let inserted = if written > 0.0 {
            (ops * m.insert / written).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let z = (design.cold_runs as f64).max(1.0);
        // no merge yet: the load's runs and every write since fit the K runs of a first level that keeps
        // its runs (a first level of one run, Z = 1, merges each flush into it)
        let unmerged = (z > 1.0 && (n + obsolete) / eb <= k).then_some(obsolete);
        let cap = (k - 1.0).max(0.0) * eb;
        let cycle = cap.min(written);
        // entries flushed when the operations priced end (the live entries, the load's among them, and the
        // versions the updates kept) and when they begin
        let this = workload.operations as f64;
        let flushed = (
            (n + obsolete - this * (m.insert + (m.blind_update + m.rmw) * kept)).max(0.0),
            n + obsolete,
        );
        let flow = LogFlow {
            k,
            z,
            eb,
            kept,
            written,
            inserted,
            loaded,
            cycle,
        };
        // (levels weigh run files, as the planner does: an entry's key, value, header and block framing)
        let file_entry = crate::loaded::Sizes::of(
            workload.key_bytes as usize,
            workload.value_bytes as usize,
            design.block_bytes as usize,
        )
        .disk_entry
        .max(shape.entry_bytes);
        let levels_over = |entries: f64| {
            layout::level_count(
                entries,
                file_entry,
                design.level_base_bytes(),
                design.size_ratio as f64,
            )
            .max(1)
        };
        // the levels the live entries fill over the engine's level capacities; then as many more as the runs
        // the levels keep push the tree down (a level over its capacity by its versions is pushed into the
        // next). One level: the first is the last and keeps Z runs (with Z = 1, each flush merges into it)
        let first_push = design.level_base_bytes() * design.size_ratio as f64 / file_entry;
        let at = |levels: u32, first: f64| {
            let (segments, cycle, fixed) = flow.layout(levels, first, parts);
            LshAges {
                resident: design.fence_bytes as f64 / per_entry,
                eb,
                entries: n,
                unmerged,
                cycle,
                cap,
                cap_before_push: (z - 1.0) * eb,
                fixed,
                segments,
                levels,
                kept,
                flushed,
                first_push,
                loaded,
            }
        };
        // the first level's fill depends on its cycle alone, not on the runs below it (nor on their levels)
        let first = at(2, 0.0).first_level();
        let mut ages = at(levels_over(n), first);
        for _ in 0..4 {
            let deeper = levels_over(ages.merged_versions());
            if deeper <= ages.levels {
                break;
            }
            ages = at(deeper, first);
        }
        ages
    }

    /// Levels the runs fill: the live entries over the engine's level capacities, and as many more as the
    /// versions the levels keep (the first level's runs, the levels' between, a tiered last level's pushes)
    /// push the tree down.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// The ages at the points of a cycle where the mean does not price them, each with its weight (summing to
    /// 1): at the first level between the first and the last whose runs, at the fullest point of its cycle
    /// (K − 1 runs), no longer all keep their hash indexes in what M_FP leaves them, as [`cycle_phases`](crate::dist::residency::cycle_phases) takes
    /// a tree's. The search's 1 MiB/30k pick for YCSB-A and F (T = 17, K = Z = 16, 30,000 keys) read 1.05-1.33
    /// blocks a lookup with its level 2's runs all resident and 2.8-3.3 with 13-14 runs there (9-10 of them
    /// resident), 1.72 over eight points of its cycle, where its mean, 7.5 runs, all resident, priced 1.27.
    /// Empty where every point fits, before the first merge, and where no level between cycles.
    pub(in crate::dist) fn middle_phases(&self) -> Vec<(f64, LshAges)> {
        if self.unmerged.is_some() {
            return Vec::new();
        }
        let mut above = self.first_level();
        for (j, s) in self.segments.iter().enumerate() {
            let n = s.cycles_at;
            if n >= 2.0 && s.stored > 0.0 && above + (n - 1.0) * s.stored > self.resident {
                let whole = ((self.resident - above).max(0.0) / s.stored).floor();
                let spread: RunSpread = (0..n as usize).map(|r| (r as f64, 1.0 / n)).collect();
                return stretches(&spread, whole)
                    .into_iter()
                    .map(|(w, runs)| {
                        let mut at = self.clone();
                        at.segments[j].count = runs;
                        (w, at)
                    })
                    .collect();
            }
            above += s.count * s.stored;
            if above > self.resident {
                break;
            }
        }
        Vec::new()
    }

    /// `f` over the ages a lookup meets (`LshAges::middle_phases`, or these at their mean), weighted.
    pub fn over_phases(&self, f: impl Fn(&LshAges) -> f64) -> f64 {
        over_ages(self, &self.middle_phases(), f)
    }

    /// Runs on average: every eb-entry run until the first merge, then the merged run, the first level's
    /// runs (half a cycle's on average) and the runs of the levels between.
    pub fn runs(&self) -> f64 {
        match self.unmerged {
            Some(w) => (self.entries + w) / self.eb,
            None => {
                1.0 + self.first_level() / self.eb
                    + self.segments.iter().map(|s| s.count).sum::<f64>()
            }
        }
    }

    /// The hash indexes a lookup consults ([`Probes::of_runs`]): the first level's runs, the levels' between,
    /// newest first, then the merged run (every run alike until the first merge).
    pub fn probes(&self) -> Probes {
        match self.unmerged {
            Some(w) => Probes::of_runs([((self.entries + w) / self.eb, self.eb)]),
            None => Probes::of_runs(
                std::iter::once((self.first_level() / self.eb, self.eb))
                    .chain(self.segments.iter().map(|s| (s.count, s.stored)))
                    .chain(std::iter::once((1.0, self.base()))),
            ),
        }
    }

    /// Cold runs on average (a run partly cold counts by its cold share).
    pub fn cold_runs(&self) -> f64 {
        let h = self.resident;
        match self.unmerged {
            Some(w) => (w + self.entries - h).max(0.0) / self.eb,
            None => self.over_cycle(|d| {
                let mut above = d;
                let mut cold = (d - h).max(0.0) / self.eb;
                for s in &self.segments {
                    let held = s.count * s.stored;
                    cold += (held - (h - above).clamp(0.0, held)) / s.stored;
                    above += held;
                }
                cold + self.base_cold(above)
            }),
        }
    }

    /// Expected blocks a lookup of a key of `part` reads beyond the one data block that holds the key, for
    /// cold runs. A cold file has neither its hash index nor a filter in memory: each cold run newer than the
    /// key's costs its on-disk index block and the data block that index names (2), and a cold run holding the
    /// key its index block (1). The key's newest version is older than the newest `y` writes with the chance
    /// that none of them wrote it (1 − α); a key not written since the load lies anywhere in the load's runs.
    pub fn cold_probes(&self, part: &KeyPart) -> f64 {
        // ages below are in entries kept; α takes writes
        let kept = self.kept;
        let older = |y: f64| 1.0 - KeySpace::alpha(part, y / kept);
        match self.unmerged {
            Some(w) => {
                let n = self.entries;
                let not_since = older(w);
                self.probes_unmerged(|y: f64| {
                    if y <= w {
                        older(y)
                    } else {
                        not_since * (1.0 - (y - w) / n).max(0.0)
                    }
                })
            }
            // ∫ older over a stretch in closed form
            None => self.probes_merged(
                older,
                |a: f64, b: f64| kept * crate::keys::not_written_integral(part, a / kept, b / kept),
                true,
            ),
        }
    }

    /// As [`LshAges::cold_probes`], with `older(y)` the chance that the key's newest version is older than the
    /// newest `y` entries over the whole tree (for "latest" reads, which follow insertion order).
    pub fn cold_probes_by_age(&self, older: impl Fn(f64) -> f64) -> f64 {
        match self.unmerged {
            Some(_) => self.probes_unmerged(older),
            None => self.probes_merged(&older, |a: f64, b: f64| integral(&older, a, b), false),
        }
    }

    /// Cold-run blocks when every run holds eb entries, `older(y)` over entry ages.
    pub(in crate::dist) fn probes_unmerged(&self, older: impl Fn(f64) -> f64) -> f64 {
        let h = self.resident;
        let end = self.entries + self.unmerged.unwrap_or(0.0);
        if h >= end {
            return 0.0;
        }
        2.0 * integral(&older, h, end) / self.eb + older(h)
    }

    /// Cold-run blocks over the first level's cycle: its runs (of eb entries each), the runs of the levels
    /// below it, newest first, then the merged run; M_FP covers the newest `resident` entries they hold.
    /// `area(a, b)` is ∫ older over [a, b]. With `by_key`, `older` runs over writes only: a key not written
    /// since the load lies in any of the load's runs (and the merged run) alike, by their share of its records.
    pub(in crate::dist) fn probes_merged(
        &self,
        older: impl Fn(f64) -> f64,
        area: impl Fn(f64, f64) -> f64,
        by_key: bool,
    ) -> f64 {
        let h = self.resident;
        let loaded = self.loaded.max(1.0);
        self.over_cycle(|d| {
            // the stretches newest first: (the writes they cover, the entries they hold, one run's writes)
            let first = Segment {
                count: d / self.eb,
                age: self.eb,
                stored: self.eb,
                live: 0.0,
                load: false,
                cycles_at: 0.0,
            };
            let mut blocks = 0.0;
            // writes and entries above the stretch at hand
            let (mut age, mut above) = (0.0, 0.0);
            // by key: where the load's runs begin, and the chance the key was not written since the load
            let mut load_from: Option<(f64, f64)> = None;
            // the chance the key's newest version is older than `y`, and its integral over [a, b]
            let older_at = |y: f64, from: Option<(f64, f64)>| match from {
                Some((w, not_since)) => not_since * (1.0 - (y - w) / loaded).max(0.0),
                None => older(y),
            };
            for s in std::iter::once(&first).chain(&self.segments) {
                let (width, held) = (s.count * s.age, s.count * s.stored);
                if width <= 0.0 {
                    continue;
                }
                if by_key && s.load && load_from.is_none() {
                    load_from = Some((age, older(age)));
                }
                // the stretch's newest entries are resident while M_FP lasts
                let warm = (h - above).clamp(0.0, held) / held;
                let cold_from = age + warm * width;
                let end = age + width;
                let stretch = match load_from {
                    Some((w, not_since)) => {
                        let (a, b) = ((cold_from - w).min(loaded), (end - w).min(loaded));
                        not_since * ((b - a) - (b * b - a * a) / (2.0 * loaded))
                    }
                    None => area(cold_from, end),
                };
                // each cold run newer than the key's: its index block and the data block it names; the cold
                // run that holds the key: its index block
                blocks += 2.0 * stretch / s.age + older_at(cold_from, load_from)
                    - older_at(end, load_from);
                age = end;
                above += held;
            }
            blocks + older_at(age, load_from) * self.base_cold(above)
        })
    }

    /// Versions the runs hold on average (live entries and older versions).
    pub fn versions(&self) -> f64 {
        match self.unmerged {
            Some(w) => self.entries + w,
            None => self.merged_versions(),
        }
    }

    /// Versions held once merges run: the live entries (the merged run's and the load's runs'), the first
    /// level's and the levels' below.
    pub(in crate::dist) fn merged_versions(&self) -> f64 {
        self.base()
            + self.first_level()
            + self
                .segments
                .iter()
                .map(|s| s.count * s.stored)
                .sum::<f64>()
    }

    /// Entries the first level holds on average while the operations priced run (half its cycle's stretch over
    /// a long run), or the stretch it always holds.
    pub(in crate::dist) fn first_level(&self) -> f64 {
        self.over_cycle(|d| d)
    }

    /// The cold share of the merged run below `above` entries of newer runs: M_FP covers the newest
    /// `resident` entries, the newer runs first.
    pub(in crate::dist) fn base_cold(&self, above: f64) -> f64 {
        1.0 - ((self.resident - above) / self.base()).clamp(0.0, 1.0)
    }

    /// Entries of the last level's merged run: the live entries less those the runs above it hold (the load's
    /// runs not merged yet, the inserts of the writes' runs).
    pub(in crate::dist) fn base(&self) -> f64 {
        let above: f64 = self
            .segments
            .iter()
            .map(|s| s.count * s.stored * s.live)
            .sum();
        (self.entries - above).max(1.0)
    }

    /// Entries flushed between two pushes of the first level once it has been pushed down: K runs', or its
    /// capacity's if that comes sooner.
    pub(in crate::dist) fn period(&self) -> f64 {
        (self.cap + self.eb).min(self.first_push.max(self.eb))
    }

    /// Entries the first level holds above its merged run when `x` entries have been flushed since the store
    /// was made: it is pushed down first at its capacity (while it is the only level it is the last, which
    /// merges its two oldest runs on each flush past Z and is pushed by bytes alone), then every
    /// [`LshAges::period`], filling up to its K-th run.
    pub(in crate::dist) fn fill_at(&self, x: f64) -> f64 {
        if x < self.first_push {
            x.min(self.cap_before_push)
        } else {
            ((x - self.first_push) % self.period()).min(self.cap)
        }
    }

    /// The mean of `f(d)`, d the entries the first level holds (written since its last push), while the
    /// operations priced run: over the points of its cycle they reach when they run less than a cycle (the
    /// validation's measured slices, a short workload), over the whole cycle otherwise; the stretch it always
    /// holds when it does not cycle.
    pub(in crate::dist) fn over_cycle(&self, f: impl Fn(f64) -> f64) -> f64 {
        if self.fixed {
            return f(self.cycle);
        }
        let (from, to) = self.flushed;
        // (the entries flushed are counted to within a share of them: the window widens by it)
        let slack = PHASE_SLACK * to;
        let (from, to) = ((from - slack).max(0.0), to + slack);
        if self.cap > 0.0 && to - from < self.period() {
            // the operations priced run over less than a cycle: the first level holds what was flushed since its
            // last push, at each point they reach
            return (0..PHASE_SAMPLES)
                .map(|i| {
                    let x = from + (to - from) * (i as f64 + 0.5) / PHASE_SAMPLES as f64;
                    f(self.fill_at(x))
                })
                .sum::<f64>()
                / PHASE_SAMPLES as f64;
        }
        (0..CYCLE_SAMPLES)
            .map(|i| f(self.cycle * (i as f64 + 0.5) / CYCLE_SAMPLES as f64))
            .sum::<f64>()
            / CYCLE_SAMPLES as f64
    }
}

/// ∫ f over [a, b] by the midpoint rule (0 when b ≤ a).
pub(in crate::dist) fn integral(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let step = (b - a) / AGE_STEPS as f64;
    (0..AGE_STEPS)
        .map(|i| f(a + step * (i as f64 + 0.5)))
        .sum::<f64>()
        * step
}
