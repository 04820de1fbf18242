//! Algorithm 1 (Cosine Section 4): the single-operation workloads, their timings on 1..=η threads
//! ([`measure_speedups`]), φ inverted from the speedups ([`PhiMeasurement`]), the whole calibration of an
//! engine ([`calibrate`]) and how its values go into a φ library ([`record_phi`]).

use crate::phase::run_phase;
use crate::store::Store;
use crate::verify::Ledger;
use crate::workload::{CoreWorkload, Distribution};

/// The operation types of Algorithm 1 (Cosine Section 4), in the φ library's order.
pub const CALIBRATION_OPS: [&str; 5] = ["lookup", "insert", "blind_update", "rmw", "range"];

/// The single-operation workload that measures one of [`CALIBRATION_OPS`]: uniform keys over `records`, `ops`
/// operations (a twentieth of them for range scans of 1..100 records).
pub fn calibration_workload(op: &str, records: u64, ops: u64) -> Option<CoreWorkload> {
    let mut w = CoreWorkload::named("c")?;
    w.name = format!("calibrate-{op}");
    w.distribution = Distribution::Uniform;
    (w.read, w.update, w.insert, w.scan, w.read_modify_write) = match op {
        "lookup" => (1.0, 0.0, 0.0, 0.0, 0.0),
        "insert" => (0.0, 0.0, 1.0, 0.0, 0.0),
        "blind_update" => (0.0, 1.0, 0.0, 0.0, 0.0),
        "rmw" => (0.0, 0.0, 0.0, 0.0, 1.0),
        "range" => (0.0, 0.0, 0.0, 1.0, 0.0),
        _ => return None,
    };
    w.record_count = records;
    w.operation_count = if op == "range" { ops / 20 } else { ops };
    w.max_scan_length = 100;
    Some(w)
}

/// Rounds of Algorithm 1's timings: each round times 1..=η threads once, and each thread count keeps its best
/// time over the rounds (a shared machine only ever slows a run down, so the fastest is the least disturbed).
pub const CALIBRATION_ROUNDS: usize = 3;

/// Algorithm 1's timings of one operation type: the speedup of c threads over one, per thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct Speedups {
    /// (c, T(1)/T(c)) from each thread count's best time over the rounds, for c = 2..=η.
    pub best: Vec<(usize, f64)>,
    /// The same ratio within each round alone (one run per thread count), for c = 2..=η: its spread says how
    /// much the machine's noise moved the measurement.
    pub rounds: Vec<Vec<(usize, f64)>>,
}

/// Algorithm 1's measurement on a store that `w` has been loaded into and settled: the same operations on 1
/// thread, then on c = 2..=`eta` threads, [`CALIBRATION_ROUNDS`] times over; returns the speedup T(1)/T(c)
/// for each c from the best time of each, and within each round. Inserts continue after the keys earlier
/// timings inserted, so every timed insert adds a new key.
pub fn measure_speedups(
    store: &dyn Store,
    ledger: &Ledger,
    w: &CoreWorkload,
    eta: usize,
) -> Result<Speedups, String> {
    let mut w = w.clone();
    let eta = eta.max(2);
    // best[i]: the fastest time on i + 1 threads
    let mut best = vec![f64::INFINITY; eta];
    let mut rounds = Vec::with_capacity(CALIBRATION_ROUNDS);
    for round in 0..CALIBRATION_ROUNDS {
        let mut times = vec![f64::INFINITY; eta];
        for (i, t) in best.iter_mut().enumerate() {
            let c = i + 1;
            let r = run_phase(
                store,
                ledger,
                &w,
                c,
                false,
                5 + (round * eta + c) as u64,
                None,
            );
            if let Some(why) = r.first_wrong {
                return Err(format!("{}: wrong result: {why}", store.name()));
            }
            w.inserted_before += r.inserted;
            *t = t.min(r.seconds);
            times[i] = r.seconds;
        }
        rounds.push(
            (2..=eta)
                .map(|c| (c, times[0] / times[c - 1].max(1e-9)))
                .collect(),
        );
    }
    Ok(Speedups {
        best: (2..=eta)
            .map(|c| (c, best[0] / best[c - 1].max(1e-9)))
            .collect(),
        rounds,
    })
}

/// φ of one operation type as Algorithm 1 measured it: the value a φ library keeps (Eq. 2 needs a fraction in
/// [0, 1]) and what the timings gave before it was bounded, so a speedup below 1 (more threads ran slower) or
/// above the core count is reported, never hidden.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhiMeasurement {
    /// φ inverted from the best times (Eq. 2), unbounded: negative when more threads ran slower.
    pub measured: f64,
    /// The same, each thread count's φ bounded to [0, 1] before the mean (one thread count that ran slower
    /// counts as 0, not as a large negative that would cancel the others). `None` when no speedup was valid.
    pub bounded: Option<f64>,
    /// The lowest and highest φ of the single rounds (the spread the machine's noise gives).
    pub rounds: (f64, f64),
}

impl PhiMeasurement {
    /// From Algorithm 1's timings: the mean over c = 2..=η of φ inverted from each speedup.
    pub fn from_speedups(s: &Speedups) -> Self {
        let estimates = |v: &[(usize, f64)]| -> Vec<f64> {
            v.iter()
                .filter_map(|(c, g)| cosine_cost_model::cpu::phi_from_speedup(*g, *c as f64))
                .collect()
        };
        let phi_of = |v: &[(usize, f64)]| {
            let est = estimates(v);
            est.iter().sum::<f64>() / est.len().max(1) as f64
        };
        let best = estimates(&s.best);
        let bounded = (!best.is_empty())
            .then(|| best.iter().map(|p| p.clamp(0.0, 1.0)).sum::<f64>() / best.len() as f64);
        let per_round: Vec<f64> = s.rounds.iter().map(|r| phi_of(r)).collect();
        let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let measured = phi_of(&s.best);
        PhiMeasurement {
            measured,
            bounded,
            rounds: if per_round.is_empty() {
                (measured, measured)
            } else {
                (lo, hi)
            },
        }
    }

    /// The value a φ library keeps: each thread count's φ bounded to [0, 1], then their mean (0 when no
    /// speedup could be measured, with a warning).
    pub fn phi(&self) -> f64 {
        self.bounded.unwrap_or(0.0)
    }

    /// What is wrong with the measurement, if anything: outside [0, 1] (and so bounded), or rounds that
    /// disagree by more than 0.2.
    pub fn warning(&self) -> Option<String> {
        let mut w = Vec::new();
        if self.bounded.is_none() {
            w.push("no valid speedup was measured, kept as 0".to_string());
        } else if self.measured < 0.0 {
            w.push(format!(
                "measured {:.3}: more threads ran slower than one (no parallel speedup), kept as 0",
                self.measured
            ));
        } else if self.measured > 1.0 {
            w.push(format!(
                "measured {:.3}: a speedup above the core count (caching or noise), kept as 1",
                self.measured
            ));
        }
        if self.rounds.1 - self.rounds.0 > 0.2 {
            w.push(format!(
                "noisy: single rounds gave {:.3} to {:.3}",
                self.rounds.0, self.rounds.1
            ));
        }
        (!w.is_empty()).then(|| w.join("; "))
    }
}

/// Puts one engine's measurements into a φ library: the bounded values as its entry, and a note for each
/// value that was bounded or noisy (replacing the engine's earlier notes).
pub fn record_phi(
    lib: &mut cosine_cost_model::cpu::PhiLibrary,
    name: &str,
    measured: &[PhiMeasurement; 5],
) {
    let all: Vec<(&str, PhiMeasurement)> = CALIBRATION_OPS.into_iter().zip(*measured).collect();
    record_phi_partial(lib, name, &all, "");
}

/// Puts the measured operation types of one engine into a φ library, keeping the library's values for the
/// others (an engine that cannot run an operation type, such as FASTER's ordered scans), each with a note
/// saying why it was not measured. The engine's earlier notes are replaced.
pub fn record_phi_partial(
    lib: &mut cosine_cost_model::cpu::PhiLibrary,
    name: &str,
    measured: &[(&str, PhiMeasurement)],
    not_measured: &str,
) {
    let mut entry = lib
        .get(name)
        .or_else(|| cosine_cost_model::cpu::PhiLibrary::paper().get(name))
        .unwrap_or(cosine_cost_model::cpu::PhiEntry::from_ops([0.0; 5]));
    lib.notes
        .retain(|k, _| k.split_once('.').map(|(e, _)| e) != Some(name));
    for op in CALIBRATION_OPS {
        let slot = match op {
            "lookup" => &mut entry.lookup,
            "insert" => &mut entry.insert,
            "blind_update" => &mut entry.blind_update,
            "rmw" => &mut entry.rmw,
            _ => &mut entry.range,
        };
        match measured.iter().find(|(o, _)| *o == op) {
            Some((_, m)) => {
                *slot = m.phi();
                if let Some(w) = m.warning() {
                    lib.notes.insert(format!("{name}.{op}"), w);
                }
            }
            None => {
                lib.notes.insert(
                    format!("{name}.{op}"),
                    format!("not measured ({not_measured}): {slot:.3} kept from the base library"),
                );
            }
        }
    }
    lib.entries.insert(name.to_string(), entry);
}

/// One line for a calibration's progress: the φ kept, and the warning if the measurement has one.
pub fn phi_line(name: &str, op: &str, m: &PhiMeasurement) -> String {
    let mut line = format!(
        "  {name:<10} {op:<13} phi {:.3} (rounds {:.3}-{:.3})",
        m.phi(),
        m.rounds.0,
        m.rounds.1
    );
    if let Some(w) = m.warning() {
        line.push_str("  WARNING: ");
        line.push_str(&w);
    }
    line
}

/// What [`calibrate`] asks its `open` for: a fresh store to load, then the same directory again for the timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrationStage {
    /// A fresh, empty store in the engine's own configuration, which `calibrate` loads and settles.
    Load,
    /// The loaded store, reopened for the timings with room for `write_room` bytes of writes (0 for lookups
    /// and scans) in its write buffer, so that no flush or compaction runs while the threads are timed.
    /// Algorithm 1 times one query per core; on a machine with few cores a background flush would take a
    /// core from the timed threads, and every write operation would look serial (φ ≈ 0). Flush and
    /// compaction I/O is the I/O model's to charge, not φ's.
    Time {
        /// Bytes of writes the timings will make.
        write_room: u64,
    },
}

/// Bytes the timings of `op` write on `w` (all of [`measure_speedups`]' runs on 1..=`eta` threads, every
/// round), with room for the write buffer's own overhead per entry.
pub fn calibration_write_bytes(op: &str, w: &CoreWorkload, eta: usize) -> u64 {
    // a read-modify-write may store the whole record again (ours does), so every write counts a record
    let per_write = match op {
        "insert" | "blind_update" | "rmw" => w.value_bytes() as u64 + 24 + 96,
        _ => return 0,
    };
    w.operation_count * (eta.max(2) * CALIBRATION_ROUNDS) as u64 * per_write * 5 / 4
}

/// Algorithm 1 for one engine: for each of [`CALIBRATION_OPS`], `open` a fresh store
/// ([`CalibrationStage::Load`]), load `records` on `eta` threads, settle, close it, `open` it again for the
/// timings ([`CalibrationStage::Time`]), time the operation on 1..=`eta` threads and invert Eq. 2. Returns the
/// measurement per operation (averaged over c, unbounded, with the rounds' spread) in [`CALIBRATION_OPS`]'
/// order; `done` hears each one after its store is dropped (to remove its directory and report it).
pub fn calibrate(
    records: u64,
    ops: u64,
    eta: usize,
    open: impl FnMut(&str, &CoreWorkload, CalibrationStage) -> Result<Box<dyn Store>, String>,
    done: impl FnMut(&str, &PhiMeasurement),
) -> Result<[PhiMeasurement; 5], String> {
    let measured = calibrate_ops(records, ops, eta, &CALIBRATION_OPS, open, done)?;
    Ok(std::array::from_fn(|i| measured[i].1))
}

/// [`calibrate`] on some of the operation types (each one of [`CALIBRATION_OPS`]), in the order given.
pub fn calibrate_ops<'a>(
    records: u64,
    ops: u64,
    eta: usize,
    which: &[&'a str],
    mut open: impl FnMut(&str, &CoreWorkload, CalibrationStage) -> Result<Box<dyn Store>, String>,
    mut done: impl FnMut(&str, &PhiMeasurement),
) -> Result<Vec<(&'a str, PhiMeasurement)>, String> {
    let mut phis = vec![
        (
            "",
            PhiMeasurement {
                measured: 0.0,
                bounded: None,
                rounds: (0.0, 0.0),
            }
        );
        which.len()
    ];
    for ((name, slot), op) in phis.iter_mut().zip(which) {
        *name = op;
        let w = calibration_workload(op, records, ops)
            .ok_or_else(|| format!("{op} is not an operation type of Algorithm 1"))?;
        let store = open(op, &w, CalibrationStage::Load)?;
        let ledger = Ledger::default();
        run_phase(store.as_ref(), &ledger, &w, eta, true, 3, None);
        store.settle().map_err(|e| e.to_string())?;
        drop(store);
        let write_room = calibration_write_bytes(op, &w, eta);
        let store = open(op, &w, CalibrationStage::Time { write_room })?;
        let speedups = measure_speedups(store.as_ref(), &ledger, &w, eta)?;
        drop(store);
        *slot = PhiMeasurement::from_speedups(&speedups);
        done(op, slot);
    }
    Ok(phis)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_slowdown_or_a_noisy_phi_is_reported_not_hidden() {
        use super::{record_phi, PhiMeasurement, Speedups};
        // two threads ran slower than one: Eq. 2 gives a negative φ, which is kept as 0 and said so
        let slower = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 0.8)],
            rounds: vec![vec![(2, 0.8)], vec![(2, 0.75)], vec![(2, 0.7)]],
        });
        assert!((slower.measured - (-0.5)).abs() < 1e-9, "{slower:?}");
        assert_eq!(slower.phi(), 0.0);
        assert!(slower.warning().unwrap().contains("ran slower"));
        // rounds that disagree are flagged even when the best times give a clean value
        let noisy = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 1.6)],
            rounds: vec![vec![(2, 1.1)], vec![(2, 1.6)], vec![(2, 1.9)]],
        });
        assert!((noisy.phi() - 0.75).abs() < 1e-9);
        assert!(noisy.warning().unwrap().contains("noisy"));
        // one thread count that ran slower counts as 0 in the mean, not as a large negative
        let mixed = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 1.8), (3, 0.5)],
            rounds: vec![vec![(2, 1.8), (3, 0.5)]],
        });
        assert!(
            (mixed.phi() - (1.0 - 1.0 / 1.8) / 0.5 / 2.0).abs() < 1e-9,
            "{mixed:?}"
        );
        assert!(mixed.measured < 0.0 && mixed.warning().is_some());
        // nothing measurable: 0, and said so
        let none = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 0.0)],
            rounds: vec![],
        });
        assert_eq!(none.phi(), 0.0);
        assert!(none.warning().unwrap().contains("no valid speedup"));
        let clean = PhiMeasurement::from_speedups(&Speedups {
            best: vec![(2, 1.8)],
            rounds: vec![vec![(2, 1.75)], vec![(2, 1.8)], vec![(2, 1.78)]],
        });
        assert_eq!(clean.warning(), None);
        // the library keeps the bounded value and a note; a new measurement replaces the old notes
        let mut lib = cosine_cost_model::cpu::PhiLibrary::paper();
        record_phi(&mut lib, "rocksdb", &[clean, slower, clean, noisy, clean]);
        assert_eq!(lib.entries["rocksdb"].insert, 0.0);
        assert!(lib.notes["rocksdb.insert"].contains("kept as 0"));
        assert!(lib.notes.contains_key("rocksdb.rmw"));
        assert_eq!(lib.notes_of("rocksdb").count(), 2);
        record_phi(&mut lib, "rocksdb", &[clean; 5]);
        assert!(lib.notes.is_empty());
    }

    #[test]
    fn calibration_workloads_measure_one_operation_each() {
        for op in super::CALIBRATION_OPS {
            let w = super::calibration_workload(op, 1000, 2000).unwrap();
            let shares = [w.read, w.update, w.insert, w.scan, w.read_modify_write];
            assert_eq!(shares.iter().filter(|x| **x == 1.0).count(), 1, "{op}");
            w.validate().unwrap();
        }
        assert!(super::calibration_workload("delete", 1, 1).is_none());
    }
}
