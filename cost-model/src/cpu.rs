//! The CPU model: Amdahl's speedup g(φ, η) (Cosine Eq. 2), a φ library per design class and operation type
//! (Algorithm 1's output; shipped defaults from the authors' code), workload φ, and latency/throughput (Eq. 3).

use cosine_design::{DesignClass, OperationMix};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

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

/// Eq. 3: latency in seconds of `io_total` I/Os at `iops` on η cores with parallel fraction φ.
pub fn latency_seconds(io_total: f64, iops: f64, phi: f64, cores: f64) -> f64 {
    io_total / iops / speedup(phi, cores)
}

/// Eq. 3: operations per second.
pub fn throughput(operations: f64, latency_seconds: f64) -> f64 {
    if latency_seconds <= 0.0 {
        f64::INFINITY
    } else {
        operations / latency_seconds
    }
}

/// φ for each operation type of one design class or system.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhiEntry {
    /// Point lookups (with and without a result).
    pub lookup: f64,
    /// Inserts.
    pub insert: f64,
    /// Blind updates.
    pub blind_update: f64,
    /// Read-modify-writes.
    pub rmw: f64,
    /// Range scans.
    pub range: f64,
}

impl PhiEntry {
    /// An entry from φ per operation type in the order lookup, insert, blind update, rmw, range (the order of
    /// Algorithm 1's measurements).
    pub const fn from_ops([lookup, insert, blind_update, rmw, range]: [f64; 5]) -> Self {
        PhiEntry {
            lookup,
            insert,
            blind_update,
            rmw,
            range,
        }
    }

    /// An entry from the authors' "read-like" and "write-like" values; `update_is_write` says where blind
    /// updates go (writes for RocksDB, reads for every other system in the reference code).
    pub const fn grouped(reads: f64, writes: f64, update_is_write: bool) -> Self {
        PhiEntry {
            lookup: reads,
            insert: writes,
            blind_update: if update_is_write { writes } else { reads },
            rmw: reads,
            range: reads,
        }
    }

    /// Workload φ: Σ_o φ_o · share of o (Cosine Section 4).
    pub fn workload_phi(&self, mix: &OperationMix) -> f64 {
        (mix.lookup + mix.empty_lookup) * self.lookup
            + mix.insert * self.insert
            + mix.blind_update * self.blind_update
            + mix.rmw * self.rmw
            + mix.scan * self.range
    }
}

/// Why a φ library could not be loaded.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum PhiError {
    /// The file cannot be read (or the name is neither `paper`, `learned` nor a file).
    #[error("cannot read {path} (give `paper`, `learned` or a phi library file): {reason}")]
    Unreadable {
        /// The name or path given.
        path: String,
        /// The OS's reason.
        reason: String,
    },
    /// The JSON is malformed.
    #[error("malformed phi library: {0}")]
    Malformed(String),
    /// A φ lies outside [0, 1].
    #[error("phi for {entry}.{op} = {value} is outside [0, 1]")]
    Range {
        /// The class or system.
        entry: String,
        /// The operation type.
        op: &'static str,
        /// The value.
        value: f64,
    },
    /// A design class has no entry.
    #[error("phi library has no entry for class {0}")]
    Missing(String),
}

/// φ values per design class ("lsm", "btree", "lsh", "hybrid") and per fixed system ("rocksdb", "wiredtiger",
/// "faster"), with a description of the machine they were learned on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhiLibrary {
    /// Where the values come from (machine, date, method).
    pub machine: String,
    /// φ per class or system.
    pub entries: BTreeMap<String, PhiEntry>,
    /// What the calibration said about a value, keyed `entry.op` (e.g. `rocksdb.insert`): a measurement
    /// outside [0, 1] that was bounded, or rounds that disagreed. Empty when every value was measured cleanly.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
}

impl Default for PhiLibrary {
    /// The library the search uses unless told otherwise: the one learned here ([`PhiLibrary::learned`]).
    fn default() -> Self {
        PhiLibrary::learned()
    }
}

impl PhiLibrary {
    /// The values shipped in the authors' code (MODEL.md §5), learned on their machines.
    pub fn paper() -> Self {
        let mut entries = BTreeMap::new();
        for class in ["lsm", "btree", "hybrid"] {
            entries.insert(class.to_string(), PhiEntry::grouped(0.9647, 0.797, false));
        }
        entries.insert("lsh".into(), PhiEntry::grouped(0.97, 0.9, false));
        entries.insert("rocksdb".into(), PhiEntry::grouped(0.9609, 0.8017, true));
        entries.insert("faster".into(), PhiEntry::grouped(0.9922, 0.9761, false));
        entries.insert("wiredtiger".into(), PhiEntry::grouped(0.94, 0.25, false));
        PhiLibrary {
            machine: "Cosine authors' reference values (cloud-demo-2021)".into(),
            entries,
            notes: BTreeMap::new(),
        }
    }

    /// The library learned on this project's 2-core development machine (`cost-model/data/phi-learned.json`,
    /// with the machine's description): our design classes by `cosine calibrate`, RocksDB and WiredTiger by
    /// `cosine-peers --calibrate-phi`, FASTER the authors' value (it cannot be built here). The default.
    pub fn learned() -> Self {
        PhiLibrary::from_json(include_str!("../data/phi-learned.json"))
            .expect("the shipped φ library is valid (tested)")
    }

    /// A library by name (`paper`: the authors' values, `learned`: [`PhiLibrary::learned`]) or from a JSON file.
    pub fn named_or_file(name: &str) -> Result<Self, PhiError> {
        match name {
            "paper" | "authors" => Ok(PhiLibrary::paper()),
            "learned" => Ok(PhiLibrary::learned()),
            path => PhiLibrary::from_json(&std::fs::read_to_string(path).map_err(|e| {
                PhiError::Unreadable {
                    path: path.to_string(),
                    reason: e.to_string(),
                }
            })?),
        }
    }

    /// Parses and validates a φ library (every value in [0, 1], every design class present).
    pub fn from_json(text: &str) -> Result<Self, PhiError> {
        let lib: PhiLibrary =
            serde_json::from_str(text).map_err(|e| PhiError::Malformed(e.to_string()))?;
        for (name, e) in &lib.entries {
            for (op, v) in [
                ("lookup", e.lookup),
                ("insert", e.insert),
                ("blind_update", e.blind_update),
                ("rmw", e.rmw),
                ("range", e.range),
            ] {
                if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                    return Err(PhiError::Range {
                        entry: name.clone(),
                        op,
                        value: v,
                    });
                }
            }
        }
        for class in DesignClass::ALL {
            if !lib.entries.contains_key(class.as_str()) {
                return Err(PhiError::Missing(class.as_str().into()));
            }
        }
        Ok(lib)
    }

    /// The entry for a design class.
    pub fn class(&self, class: DesignClass) -> PhiEntry {
        self.entries
            .get(class.as_str())
            .copied()
            .unwrap_or_else(|| PhiLibrary::paper().entries[class.as_str()])
    }

    /// The entry for a class or system by name.
    pub fn get(&self, name: &str) -> Option<PhiEntry> {
        self.entries.get(name).copied()
    }

    /// The calibration's notes on `name`'s values, as (operation, note).
    pub fn notes_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.notes.iter().filter_map(move |(k, v)| {
            let (entry, op) = k.split_once('.')?;
            (entry == name).then_some((op, v.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
