//! The engine's memory beyond its design (`cosine profile`): while a design of `memory` bytes loads four times
//! its memory in data and serves reads, the process's resident memory is sampled against what the engine's
//! structures hold at that moment (write buffers, filters, fences, cache: their heap bytes, as the engine
//! counts them), and the most the first exceeds the second is its overhead. Measured in a fresh process per
//! design size (an allocator keeps what an earlier engine freed), at two sizes for a line: a fixed part and a
//! share of the design's memory.

use crate::harness::class_designs;
use crate::{Error, Result};
use cosine_design::DesignClass;
use cosine_engine::{Engine, Options, SyncMode};
use cosine_ycsb::{run_phase, CoreWorkload, CosineStore, Ledger, Store};
use std::path::Path;
use std::sync::Arc;

/// What one design size held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    /// The design's memory (M).
    pub design_bytes: u64,
    /// The process's resident memory above what it held before the engine opened, at the sample where it most
    /// exceeded the structures.
    pub resident_bytes: u64,
    /// The engine's structures' heap bytes at that sample.
    pub structures_bytes: u64,
}

impl Held {
    /// Resident memory beyond the structures: the engine's own overhead at this size.
    pub fn overhead_bytes(&self) -> f64 {
        (self.resident_bytes as f64 - self.structures_bytes as f64).max(0.0)
    }
}

/// Opens the LSM class design of `memory` bytes in `dir`, loads 4 × `memory` of 1 KiB records, settles, runs
/// 20,000 reads and reports what the process holds.
pub fn held_by_design(memory: u64, dir: &Path) -> Result<Held> {
    let before = cosine_ycsb::resident_bytes().ok_or_else(|| {
        Error::Invalid("cannot read /proc/self/status for resident memory".into())
    })?;
    let (_, design) = class_designs(memory)
        .into_iter()
        .find(|(c, _)| *c == DesignClass::Lsm)
        .ok_or_else(|| Error::Invalid("no LSM class design".into()))?;
    let engine = Arc::new(Engine::open_with(
        dir,
        &design,
        Options::with_sync(SyncMode::Never),
    )?);
    let store = CosineStore(engine.clone());
    let mut w =
        CoreWorkload::named("c").ok_or_else(|| Error::Invalid("no YCSB workload c".into()))?;
    w.record_count = (4 * memory / 1024).max(1000);
    w.operation_count = 20_000;
    let ledger = Ledger::default();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (load, read, worst) = std::thread::scope(|s| {
        // every 20 ms: resident memory against the structures, the sample where it exceeds them most
        let sampler = s.spawn(|| {
            let mut worst = (0u64, 0u64);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let m = engine.stats().memory;
                let structures =
                    (m.buffer_bytes + m.filter_bytes + m.fence_bytes + m.cache_bytes) as u64;
                if let Some(now) = cosine_ycsb::resident_bytes() {
                    let resident = now.saturating_sub(before);
                    if resident.saturating_sub(structures) >= worst.0.saturating_sub(worst.1) {
                        worst = (resident, structures);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            worst
        });
        let load = run_phase(&store, &ledger, &w, 2, true, 1, None);
        let settled = store.settle();
        let read = run_phase(&store, &ledger, &w, 2, false, 2, None);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (load, settled.map(|_| read), sampler.join())
    });
    let read = read.map_err(|e| Error::Invalid(e.to_string()))?;
    if let Some(why) = load.first_wrong.or(read.first_wrong) {
        return Err(Error::Invalid(format!("wrong result: {why}")));
    }
    let (resident, structures) =
        worst.map_err(|_| Error::Invalid("the memory sampler panicked".into()))?;
    Ok(Held {
        design_bytes: design.memory_bytes(),
        resident_bytes: resident,
        structures_bytes: structures,
    })
}

/// The line through two sizes' overheads: (fixed bytes, share of the design's memory), neither below 0.
pub fn overhead_line(a: &Held, b: &Held) -> (f64, f64) {
    let (x0, y0, x1, y1) = (
        a.design_bytes as f64,
        a.overhead_bytes(),
        b.design_bytes as f64,
        b.overhead_bytes(),
    );
    let share = if x1 != x0 {
        ((y1 - y0) / (x1 - x0)).max(0.0)
    } else {
        0.0
    };
    let fixed = (y0.max(y1) - share * if y0 >= y1 { x0 } else { x1 }).max(0.0);
    (fixed, share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_passes_through_both_sizes_and_is_never_negative() {
        let held = |m: u64, over: u64| Held {
            design_bytes: m,
            resident_bytes: m + over,
            structures_bytes: m,
        };
        let (fixed, share) = overhead_line(&held(32 << 20, 20 << 20), &held(128 << 20, 26 << 20));
        assert!((fixed + share * (32 << 20) as f64 - (20 << 20) as f64).abs() < 1.0);
        assert!((fixed + share * (128 << 20) as f64 - (26 << 20) as f64).abs() < 1.0);
        // a smaller overhead at the larger size: no negative share, the larger overhead kept
        let (fixed, share) = overhead_line(&held(32 << 20, 20 << 20), &held(128 << 20, 10 << 20));
        assert_eq!((fixed, share), ((20 << 20) as f64, 0.0));
    }

    #[test]
    fn a_small_design_holds_its_structures_and_some_more() {
        let dir = tempfile::tempdir().unwrap();
        let h = held_by_design(4 << 20, dir.path()).unwrap();
        assert!(
            h.structures_bytes > 0 && h.structures_bytes <= h.design_bytes + (1 << 20),
            "{h:?}"
        );
        assert!(h.resident_bytes > 0 && h.overhead_bytes() >= 0.0, "{h:?}");
    }
}
