//! φ, the parallel fraction of Amdahl's law (Cosine Eq. 2), per operation type of each design class and fixed
//! system, as learned by Algorithm 1 on a machine: the library the search reads, with what the calibration
//! said about each value (noisy rounds, bounded measurements) and the cores it was measured on.

use cosine_design::{DesignClass, OperationMix};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

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
    /// Cores the values were measured on (Algorithm 1 timed 1..=cores threads): Eq. 2 carries a value to a VM
    /// of more cores by extrapolation. None where the library does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// The lowest and highest value of each `entry.op` that the calibration's single rounds gave (each bounded
    /// to [0, 1]), where they differed from the kept value: the spread of the evidence.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ranges: BTreeMap<String, (f64, f64)>,
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
            cores: None,
            ranges: BTreeMap::new(),
        }
    }

    /// The library learned on this project's 2-core development machine (`cost-model/data/phi-learned.json`,
    /// with the machine's description): our design classes by `cosine calibrate`, RocksDB and WiredTiger by
    /// `cosine-peers --calibrate-phi`, FASTER the authors' value (it cannot be built here). The default.
    pub fn learned() -> Self {
        PhiLibrary::from_json(include_str!("../../data/phi-learned.json"))
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

    /// The lowest and highest φ of `entry`'s operation `op` the evidence allows: its measured rounds' spread
    /// where the library records one (always holding the kept value), else the value itself.
    pub fn range_of(&self, entry: &str, op: &str) -> Option<(f64, f64)> {
        let e = self.entries.get(entry)?;
        let v = match op {
            "lookup" => e.lookup,
            "insert" => e.insert,
            "blind_update" => e.blind_update,
            "rmw" => e.rmw,
            "range" => e.range,
            _ => return None,
        };
        let (lo, hi) = self
            .ranges
            .get(&format!("{entry}.{op}"))
            .copied()
            .unwrap_or((v, v));
        Some((lo.min(v).clamp(0.0, 1.0), hi.max(v).clamp(0.0, 1.0)))
    }

    /// The lowest and highest workload φ of `entry` under `mix` ([`PhiEntry::workload_phi`] over each
    /// operation's [`PhiLibrary::range_of`]).
    pub fn workload_phi_range(&self, entry: &str, mix: &OperationMix) -> Option<(f64, f64)> {
        let r = |op| self.range_of(entry, op);
        let (l, i, u, w, s) = (
            r("lookup")?,
            r("insert")?,
            r("blind_update")?,
            r("rmw")?,
            r("range")?,
        );
        let at = |f: fn((f64, f64)) -> f64| {
            PhiEntry::from_ops([f(l), f(i), f(u), f(w), f(s)]).workload_phi(mix)
        };
        Some((at(|x| x.0), at(|x| x.1)))
    }

    /// Whether any of `entry`'s values was bounded into [0, 1] or came from rounds that disagreed by more than
    /// 0.2: the evidence is weak, and a margin that rests on it should be read at its conservative end.
    pub fn is_uncertain(&self, entry: &str) -> bool {
        self.notes_of(entry)
            .any(|(_, note)| note.contains("kept as"))
            || self.ranges.iter().any(|(k, (lo, hi))| {
                k.split_once('.').is_some_and(|(e, _)| e == entry) && hi - lo > 0.2
            })
    }

    /// The calibration's notes on `name`'s values, as (operation, note).
    pub fn notes_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.notes.iter().filter_map(move |(k, v)| {
            let (entry, op) = k.split_once('.')?;
            (entry == name).then_some((op, v.as_str()))
        })
    }
}
