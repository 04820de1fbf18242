//! The CPU model: Amdahl's speedup g(φ, η) (Cosine Eq. 2), a φ library per design class and operation type
//! (Algorithm 1's output), the CPU an operation costs per engine and operation type ([`CpuLibrary`]), and the
//! paper's Eq. 3 (kept to reproduce the paper).

/// Eq. 2: speedup on η cores when a fraction φ of the work is parallel, g = 1 / (1 − φ(1 − 1/η)).
pub fn speedup(phi: f64, cores: f64) -> f64 {
    1.0 / (1.0 - phi * (1.0 - 1.0 / cores.max(1.0)))
}

/// Algorithm 1's inversion of Eq. 2: φ from an observed speedup ĝ = T(1)/T(c) on c > 1 cores.
pub fn phi_from_speedup(observed: f64, cores: f64) -> Option<f64> {
    if cores <= 1.0 || observed <= 0.0 {
        return None;
    }
    Some((1.0 - 1.0 / observed) / (1.0 - 1.0 / cores))
}

/// Eq. 3 as the paper writes it: latency in seconds of `io_total` I/Os at `iops` on η cores with parallel
/// fraction φ, the I/O time divided by g(φ, η) (as if cores made a disk faster: kept to reproduce the paper;
/// the default model is [`crate::machine::delivered`]).
pub fn latency_seconds(io_total: f64, iops: f64, phi: f64, cores: f64) -> f64 {
    io_total / iops / speedup(phi, cores)
}

/// Operations one core serves per second in the paper's model when no I/O is needed (\[R\]: about 5 µs of CPU
/// an operation, the same for every system): the CPU floor [`paper_eq3_seconds`] adds.
pub const PAPER_CPU_OPS_PER_CORE: f64 = 200_000.0;

/// Seconds the paper's model gives `operations` operations of `io_per_op` I/Os each on a VM of `iops` and
/// `cores` cores at workload φ `phi`: Eq. 3's I/O time over g(φ, η), plus the CPU floor of
/// [`PAPER_CPU_OPS_PER_CORE`] over g(φ, η).
pub fn paper_eq3_seconds(operations: f64, io_per_op: f64, iops: f64, phi: f64, cores: f64) -> f64 {
    let g = speedup(phi, cores);
    operations * io_per_op / iops / g + operations / (PAPER_CPU_OPS_PER_CORE * g)
}

/// Eq. 3: operations per second.
pub fn throughput(operations: f64, latency_seconds: f64) -> f64 {
    if latency_seconds <= 0.0 {
        f64::INFINITY
    } else {
        operations / latency_seconds
    }
}

mod cost;
mod phi;

pub use cost::{CpuError, CpuLibrary, OpCpu};
pub use phi::{PhiEntry, PhiError, PhiLibrary};

#[cfg(test)]
mod tests {
    use super::*;
    use cosine_design::{DesignClass, OperationMix};

    #[test]
    fn the_learned_library_parses_and_names_its_machine() {
        let l = PhiLibrary::learned();
        assert_eq!(
            PhiLibrary::default(),
            l,
            "the learned library is the default"
        );
        assert!(l.machine.contains("cores"), "{}", l.machine);
        for class in DesignClass::ALL {
            assert!(l.entries.contains_key(class.as_str()));
        }
        // RocksDB, WiredTiger and FASTER were calibrated through the peer harness; FASTER's range entry keeps
        // the authors' value (it has no ordered scan to time), and a note says so
        for system in ["rocksdb", "wiredtiger", "faster"] {
            let (learned, paper) = (
                l.get(system).unwrap(),
                PhiLibrary::paper().get(system).unwrap(),
            );
            assert_ne!(learned.lookup, paper.lookup, "{system}");
            assert_ne!(learned.insert, paper.insert, "{system}");
        }
        let faster = l.get("faster").unwrap();
        assert_eq!(
            faster.range,
            PhiLibrary::paper().get("faster").unwrap().range
        );
        assert!(l
            .notes_of("faster")
            .any(|(op, note)| op == "range" && note.contains("not measured")));
        assert_eq!(
            PhiLibrary::named_or_file("paper").unwrap(),
            PhiLibrary::paper()
        );
        assert!(PhiLibrary::named_or_file("/nonexistent/phi.json").is_err());
    }

    #[test]
    fn the_learned_library_says_its_cores_and_the_spread_of_its_evidence() {
        let l = PhiLibrary::learned();
        assert_eq!(l.cores, Some(2));
        let mix = OperationMix {
            lookup: 0.5,
            blind_update: 0.5,
            ..Default::default()
        };
        for entry in ["lsm", "rocksdb", "wiredtiger"] {
            let (lo, hi) = l.workload_phi_range(entry, &mix).unwrap();
            let kept = l.get(entry).unwrap().workload_phi(&mix);
            assert!(
                lo <= kept && kept <= hi && lo >= 0.0 && hi <= 1.0,
                "{entry}: {lo} {kept} {hi}"
            );
            // every one of these has a bounded or a noisy value
            assert!(l.is_uncertain(entry), "{entry}");
        }
        // RocksDB's blind updates ran slower on two threads than on one: the range starts at 0
        assert_eq!(l.range_of("rocksdb", "blind_update").unwrap().0, 0.0);
        // the authors' values carry no spread
        let p = PhiLibrary::paper();
        assert!(!p.is_uncertain("lsm"));
        let kept = p.class(DesignClass::Lsm).workload_phi(&mix);
        assert_eq!(p.workload_phi_range("lsm", &mix), Some((kept, kept)));
    }

    #[test]
    fn notes_round_trip_and_are_left_out_when_empty() {
        let mut l = PhiLibrary::paper();
        let clean = serde_json::to_string(&l).unwrap();
        assert!(!clean.contains("notes"), "{clean}");
        l.notes
            .insert("rocksdb.insert".into(), "measured -0.2, kept as 0".into());
        let back = PhiLibrary::from_json(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back, l);
        assert_eq!(
            back.notes_of("rocksdb").collect::<Vec<_>>(),
            vec![("insert", "measured -0.2, kept as 0")]
        );
        assert_eq!(back.notes_of("rocks").count(), 0);
    }

    #[test]
    fn paper_phi_for_half_lookups_half_inserts() {
        // MODEL.md §10.1: 0.5·0.9647 + 0.5·0.797 = 0.88085, g(2) = 1.7871, g(16) = 5.740, g(96) = 7.793
        let mix = OperationMix {
            lookup: 0.5,
            insert: 0.5,
            ..Default::default()
        };
        let phi = PhiLibrary::paper()
            .class(DesignClass::Lsm)
            .workload_phi(&mix);
        assert!((phi - 0.88085).abs() < 1e-12);
        assert!((speedup(phi, 2.0) - 1.7871).abs() < 5e-5);
        assert!((speedup(phi, 16.0) - 5.740).abs() < 5e-4);
        assert!((speedup(phi, 96.0) - 7.793).abs() < 5e-4);
    }

    #[test]
    fn inversion_round_trips() {
        for phi in [0.1, 0.5, 0.9647] {
            for c in [2.0, 4.0, 16.0] {
                assert!((phi_from_speedup(speedup(phi, c), c).unwrap() - phi).abs() < 1e-12);
            }
        }
        assert_eq!(phi_from_speedup(1.5, 1.0), None);
    }

    #[test]
    fn library_json_round_trip_and_validation() {
        let lib = PhiLibrary::paper();
        let text = serde_json::to_string(&lib).unwrap();
        assert_eq!(PhiLibrary::from_json(&text).unwrap(), lib);
        let bad = text.replace("0.9647", "1.9647");
        assert!(matches!(
            PhiLibrary::from_json(&bad),
            Err(PhiError::Range { .. })
        ));
    }

    #[test]
    fn latency_and_throughput() {
        let lat = latency_seconds(1e6, 1e4, 0.0, 8.0);
        assert!((lat - 100.0).abs() < 1e-9);
        assert!((throughput(1e6, lat) - 1e4).abs() < 1e-6);
        assert!(latency_seconds(1e6, 1e4, 0.9, 8.0) < lat);
    }
}
