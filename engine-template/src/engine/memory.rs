//! Memory policy: which runs keep their fence pointers and filters within M_FP and M_BF, and the writer
//! options (Monkey's bits, file sizes, merge threads) that follow from the design.

use super::*;
use cosine_levels::IndexKind;

pub(super) use cosine_levels::planner::Residency;

impl Inner {
    /// Which runs keep their fence pointers (and filters) in memory: the planner's rule
    /// ([`cosine_levels::planner::residency`]) over each file's fences (a hash index, for LSH files). The
    /// rest are cold and reached through their on-disk index blocks. An LSH run past M_FP costs an index block
    /// and a data block per lookup that reaches it (no filter skips it); the cost model charges that
    /// (`DistributionAware`'s cold LSH runs), and the search reserves M_FP for every key's index entry. (Every
    /// file's top index, one fence per index block, about 1% of its fences, stays in memory hot or cold; like
    /// the cost model, residency does not weigh it.)
    pub(super) fn residency(&self, v: &Version) -> Residency {
        cosine_levels::planner::residency(&v.levels, self.design.fence_bytes, |f| {
            f.meta.fence_bytes
        })
    }

    /// Levels that keep fences in memory, counted from the top (the rest are cold and hold up to Z runs).
    pub(super) fn hot_levels(&self, v: &Version) -> usize {
        self.residency(v).hot_levels
    }

    pub(super) fn set_residency(&self, v: &Version) -> Result<()> {
        let r = self.residency(v);
        let filters = self.parts.filtered();
        for (i, (level, resident)) in v.levels.iter().zip(&r.resident_runs).enumerate() {
            for (j, run) in level.runs.iter().enumerate() {
                for (k, f) in run.files.iter().enumerate() {
                    let in_budget = j < *resident
                        || r.partial
                            .is_some_and(|(pi, pj, n)| (pi, pj) == (i, j) && k < n);
                    // files without a hash index when the parts keep one (written by another design before
                    // an adaptation) stay cold
                    let hot =
                        in_budget && (self.parts.index != IndexKind::Hash || f.has_hash_index());
                    f.set_residency(hot, filters)?;
                }
            }
        }
        Ok(())
    }

    /// Writer options for files of `level`: Monkey's bits per key for that level given the data so far (plus
    /// `extra_entries` and `extra_bytes` not yet in `v`). With `replacing` = (files, entries), a compaction's
    /// output, the bits are capped so that the filters held in memory stay within M_BF once `entries` entries
    /// replace `files`. A flush (`None`) always gets its level's Monkey bits: starving the newest, smallest
    /// runs would invert Monkey (they deserve the most bits per key, and every lookup probes them first); the
    /// deeper levels absorb any overdraft until they are rewritten.
    pub(super) fn writer_options(
        &self,
        v: &Version,
        level: usize,
        extra_entries: u64,
        extra_bytes: u64,
        replacing: Option<(&HashSet<u64>, u64)>,
    ) -> WriterOptions {
        let d = &self.design;
        let entries = (v.entries() + extra_entries).max(1);
        let bytes = v.bytes() + extra_bytes;
        let entry_bytes = (bytes as f64 / entries as f64).max(1.0);
        let levels = cosine_design::shape::level_count(
            entries as f64,
            entry_bytes,
            d.level_base_bytes(),
            d.size_ratio as f64,
        )
        .max(v.depth() as u32)
        .max(level as u32)
        .max(1);
        let bits = if d.filter_bytes == 0 || !self.parts.filtered() {
            0.0
        } else {
            let per_level = cosine_filters::bits_per_key_per_level(
                d.filter_bytes,
                entries as f64,
                levels,
                d.size_ratio as f64,
                d.hot_runs as f64,
                d.cold_runs as f64,
            );
            let cap = replacing.map_or(f64::INFINITY, |(replaced, new_entries)| {
                // the filters other files hold: those of the levels above this one count at least what
                // Monkey plans for them, so that an output deep in the tree (written when the levels above
                // happen to be empty, after a push) cannot take the memory their next runs need: such a level
                // was left with no filter at all, and every lookup read a block there
                // (filters held by the levels above this one, by this one and the ones below)
                let (held_above, held_here_and_below) = v
                    .levels
                    .iter()
                    .enumerate()
                    .flat_map(|(i, l)| {
                        l.runs
                            .iter()
                            .flat_map(|r| r.files.iter())
                            .map(move |f| (i + 1 < level, f))
                    })
                    .filter(|(_, f)| !replaced.contains(&f.id))
                    .fold((0usize, 0usize), |(a, b), (above, f)| {
                        let bytes = f.memory_bytes().1;
                        if above {
                            (a + bytes, b)
                        } else {
                            (a, b + bytes)
                        }
                    });
                // what Monkey plans for each level above: its bits over its share of the entries, and each of
                // the runs it may gather (K) carrying at least one file's fixed overhead
                let planned_above: f64 = (1..level)
                    .map(|j| {
                        let bits = per_level.get(j - 1).copied().unwrap_or(0.0);
                        let share =
                            cosine_design::shape::data_share(j as u32, levels, d.size_ratio as f64);
                        let runs = d.hot_runs.max(1);
                        let files_per_run =
                            files_for(bytes as f64 * share / runs as f64, self.file_bytes());
                        bits.min(MAX_BITS_PER_KEY) * entries as f64 * share / 8.0
                            + (runs * files_per_run * cosine_filters::FILTER_OVERHEAD_BYTES as u64)
                                as f64
                    })
                    .sum();
                // A level that gathers several runs (K, or Z at the last level) keeps each until the level is
                // merged, however much the data grows meanwhile: an output there takes at most its entries'
                // share of what is left, beside the runs the level will still receive before the output is
                // merged again, each as large as the newest run staying there (or as the output, when none
                // stays), so the runs written while the data was small cannot hold the memory the later ones
                // need (first come, first served left a tiered last level of 22 runs with filters on a few and
                // none on the rest, and lookups read a block in every run they passed). A level above the last
                // is pushed down once it holds its limit; the last level merges in place once it holds one run
                // more, so it receives that one too: a last level of Z = 3 that merges its large oldest run
                // with the next, counting only its limit, gave the merged run all that was left each time, the
                // small runs arriving beside it none, and a lookup read a block in each of them (a held-out
                // validate cell: 1.18 blocks per lookup where the model priced 0.57). A level of one run is
                // rewritten by every merge into it.
                // the runs the planner lets the level gather (its rule, not a guess at it)
                let allowed =
                    Policy::of(d, self.hot_levels(v)).run_limit(level, v.depth().max(level)) as u64;
                let staying: Vec<u64> = v.levels.get(level - 1).map_or(Vec::new(), |l| {
                    l.runs
                        .iter()
                        .filter(|r| r.files.iter().any(|f| !replaced.contains(&f.id)))
                        .map(|r| r.files.iter().map(|f| f.meta.entries).sum())
                        .collect()
                });
                let overflow = u64::from(allowed > 1 && level >= v.depth());
                let arrivals = (allowed + overflow).saturating_sub(staying.len() as u64 + 1);
                let arrival_entries = staying.first().copied().unwrap_or(new_entries);
                // the files the output is written as, at most: its inputs' bytes over the file size, and one
                // partial file more for each further key range the merge is split into (each range ends with
                // its own file; `split_ranges` makes at most this many)
                let input_bytes: u64 = v
                    .levels
                    .iter()
                    .flat_map(|l| l.runs.iter().flat_map(|r| r.files.iter()))
                    .filter(|f| replaced.contains(&f.id))
                    .map(|f| f.meta.size)
                    .sum();
                let file_bytes = self.file_bytes();
                let ranges = (self.compaction_threads() as u64)
                    .min((input_bytes / file_bytes.max(1)).max(1))
                    .max(1);
                let output_files = files_for(input_bytes as f64, file_bytes) + ranges - 1;
                OutputFilterBudget {
                    filter_bytes: d.filter_bytes,
                    held_here_and_below: held_here_and_below as u64,
                    held_above: held_above as u64,
                    planned_above,
                    output_files,
                    entries: new_entries,
                    reserved_entries: arrivals * arrival_entries,
                }
                .bits_per_key()
            });
            per_level
                .get(level - 1)
                .copied()
                .unwrap_or(0.0)
                .min(MAX_BITS_PER_KEY)
                .min(cap)
        };
        WriterOptions {
            block_bytes: d.block_bytes as usize,
            bits_per_key: bits,
            granularity: self.parts.filter.unwrap_or(d.filter_granularity),
            index: self.parts.index,
        }
    }

    /// Threads one compaction's merge uses (`Design.threads`; 0 = one per core): a merge large enough is cut
    /// into that many key ranges merged side by side (subcompactions), beside the flush thread.
    pub(super) fn compaction_threads(&self) -> usize {
        match self.design.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n as usize,
        }
    }

    /// Bytes per output file: the design's, except that a run-granularity filter needs the whole run in one
    /// file. Without filters (LSH designs) files stay bounded, and so does what writing one holds in memory
    /// (its fences and hash-index entries until the file is finished).
    pub(super) fn file_bytes(&self) -> u64 {
        if self.design.filter_bytes > 0
            && self.parts.filtered()
            && self.parts.filter == Some(FilterGranularity::Run)
        {
            u64::MAX
        } else {
            self.design.file_bytes
        }
    }
}

/// Files of at most `file_bytes` that `bytes` of entries fill (at least one).
fn files_for(bytes: f64, file_bytes: u64) -> u64 {
    if file_bytes == u64::MAX || file_bytes == 0 {
        1
    } else {
        ((bytes / file_bytes as f64).ceil() as u64).max(1)
    }
}

/// What a compaction's output may spend on its filters so that every filter held in memory stays within M_BF:
/// M_BF less what the other files of its own and deeper levels hold, less what the levels above hold or
/// Monkey plans for them (whichever is more), less the fixed overhead of the output's own files, shared by
/// entry with the runs the level will still receive before the output is merged again.
#[derive(Clone, Copy, Debug)]
struct OutputFilterBudget {
    /// M_BF.
    filter_bytes: u64,
    /// Filter bytes of the files that stay at the output's level and below.
    held_here_and_below: u64,
    /// Filter bytes of the files that stay above the output's level.
    held_above: u64,
    /// What Monkey plans for the levels above, their files' fixed overhead included.
    planned_above: f64,
    /// Files the output will be written as (each filter pays [`cosine_filters::FILTER_OVERHEAD_BYTES`]).
    output_files: u64,
    /// Entries of the output.
    entries: u64,
    /// Entries of the runs the level will still receive before the output is merged again: they get the
    /// same bits per key.
    reserved_entries: u64,
}

impl OutputFilterBudget {
    /// Bits per key the output may take.
    fn bits_per_key(&self) -> f64 {
        let held =
            self.held_here_and_below as f64 + (self.held_above as f64).max(self.planned_above);
        let overhead = (self.output_files * cosine_filters::FILTER_OVERHEAD_BYTES as u64) as f64;
        8.0 * (self.filter_bytes as f64 - held - overhead).max(0.0)
            / (self.entries + self.reserved_entries).max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Level 1's merge of three flushed runs into its one run writes one file: it pays one file's overhead, not
    /// one per input (counting the inputs left a level-1 output of 104 entries no filter at all when the
    /// deeper levels had left M_BF only what Monkey plans for level 1, and every absent lookup read a block).
    #[test]
    fn a_merge_pays_the_overhead_of_the_files_it_writes_not_of_its_inputs() {
        let overhead = cosine_filters::FILTER_OVERHEAD_BYTES as u64;
        // what Monkey plans for level 1: 20 bits for 400 entries, and one file's overhead
        let planned = 20.0 * 400.0 / 8.0 + overhead as f64;
        let budget = OutputFilterBudget {
            filter_bytes: 100_000,
            held_here_and_below: 100_000 - planned as u64,
            held_above: 0,
            planned_above: 0.0,
            output_files: files_for(104.0 * 60.0, 4 << 20),
            entries: 104,
            reserved_entries: 0,
        };
        assert_eq!(budget.output_files, 1);
        let bits = budget.bits_per_key();
        assert!((bits - 20.0 * 400.0 / 104.0).abs() < 1e-9, "{bits}");
        // as the inputs were counted (4 files: 3 flushed runs and the level's run), it had nothing left
        let as_inputs = OutputFilterBudget {
            output_files: 4,
            ..budget
        };
        assert!(as_inputs.bits_per_key() < bits / 2.0);
    }

    #[test]
    fn the_levels_above_keep_what_monkey_plans_for_them_or_what_they_hold() {
        let base = OutputFilterBudget {
            filter_bytes: 10_000,
            held_here_and_below: 2_000,
            held_above: 1_000,
            planned_above: 3_000.0,
            output_files: 2,
            entries: 1_000,
            reserved_entries: 3_000,
        };
        let left =
            10_000.0 - 2_000.0 - 3_000.0 - 2.0 * cosine_filters::FILTER_OVERHEAD_BYTES as f64;
        assert!((base.bits_per_key() - 8.0 * left / 4_000.0).abs() < 1e-9);
        let holding_more = OutputFilterBudget {
            held_above: 4_000,
            ..base
        };
        assert!(holding_more.bits_per_key() < base.bits_per_key());
        // nothing left: no filter, never a negative size
        let full = OutputFilterBudget {
            held_here_and_below: 10_000,
            ..base
        };
        assert_eq!(full.bits_per_key(), 0.0);
        assert_eq!(files_for(10.0, u64::MAX), 1);
        assert_eq!(files_for(9.0 * 1024.0, 4096), 3);
    }
}
