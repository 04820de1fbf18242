//! The engine's statistics: each level's shape and I/O counters, amplification, and memory against the
//! design's budgets.

use super::*;

impl Inner {
    pub(super) fn stats(&self) -> Stats {
        let (version, buffer_bytes) = {
            let s = self.state.read();
            (s.version.clone(), s.buffer_bytes())
        };
        let residency = self.residency(&version);
        let counters = self.stats.snapshot(version.levels.len());
        let levels: Vec<LevelStats> = version
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| LevelStats {
                level: i + 1,
                runs: l.runs.len(),
                files: l.runs.iter().map(|r| r.files.len()).sum(),
                bytes: l.bytes(),
                entries: l.entries(),
                hot: i < residency.hot_levels,
                resident_runs: residency.resident_runs.get(i).copied().unwrap_or(0),
                io: counters.get(i).copied().unwrap_or_default(),
            })
            .collect();
        let (mut fences, mut filters) = (0usize, 0usize);
        for (_, f) in version.files() {
            let (a, b) = f.memory_bytes();
            fences += a;
            filters += b;
        }
        let flushed = self.stats.bytes_flushed.load(Ordering::Relaxed);
        let compacted = self.stats.bytes_compacted_written.load(Ordering::Relaxed);
        let user = self.user_bytes.load(Ordering::Relaxed);
        let total = version.bytes();
        let deepest = version
            .levels
            .iter()
            .rev()
            .find(|l| !l.runs.is_empty())
            .map_or(0, |l| l.bytes());
        Stats {
            levels,
            bytes_flushed: flushed,
            bytes_compacted_read: self.stats.bytes_compacted_read.load(Ordering::Relaxed),
            bytes_compacted_written: compacted,
            subcompactions: self.stats.subcompactions.load(Ordering::Relaxed),
            user_bytes_written: user,
            write_amplification: if user == 0 {
                0.0
            } else {
                (flushed + compacted) as f64 / user as f64
            },
            space_amplification: if deepest == 0 {
                0.0
            } else {
                total as f64 / deepest as f64
            },
            disk_bytes: total,
            memory: MemoryStats {
                buffer_bytes,
                filter_bytes: filters,
                fence_bytes: fences,
                cache_bytes: self.cache.as_ref().map_or(0, |c| c.bytes() as usize),
                buffer_budget_bytes: self.design.buffer_bytes,
                filter_budget_bytes: self.design.filter_bytes,
                fence_budget_bytes: self.design.fence_bytes,
                cache_budget_bytes: self.design.cache_bytes,
                budget_bytes: self.design.memory_bytes(),
            },
            cache: self.cache.as_ref().map(|c| c.stats()).unwrap_or_default(),
            adapted_from: self.adapted_from.clone(),
        }
    }
}
