//! Knob spaces: the settings a tuner may change, each with its domain, and the map between a point of the unit
//! cube (what sampling, the surrogate and the genetic search work on) and the settings an engine runs with.
//!
//! A configuration is a point `u ∈ [0, 1]^d`, one coordinate a knob. Decoding rounds a coordinate to the knob's
//! value (an integer on a linear or logarithmic scale, a real, or one of a few choices); encoding a value gives
//! the coordinate it decodes from, so `encode(decode(u))` is the canonical point of `u`'s configuration and two
//! points of one configuration compare equal. For our engine the knobs are the design primitives (T, K, Z and
//! the split of the memory budget between buffer, filters, entry cache and fences) and its algorithmic choices;
//! the memory budget itself is not a knob, it is the constraint every configuration keeps.

use crate::{Error, Result};
use cosine_design::{Design, DesignClass};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The values a knob takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// An integer in `lo..=hi`, spread linearly or logarithmically over the unit interval.
    Int {
        /// Smallest value.
        lo: i64,
        /// Largest value.
        hi: i64,
        /// Logarithmic scale (each doubling takes the same share of the interval).
        log: bool,
    },
    /// A real in `lo..=hi`.
    Real {
        /// Smallest value.
        lo: f64,
        /// Largest value.
        hi: f64,
    },
    /// One of a few named choices, each an equal share of the interval.
    Choice(&'static [&'static str]),
}

/// One knob: its name (as the repository records it), its domain and what it sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knob {
    /// Name.
    pub name: &'static str,
    /// Values.
    pub domain: Domain,
    /// What it sets, in a line.
    pub doc: &'static str,
}

impl Domain {
    /// Steps a real knob's coordinate is rounded to (a canonical point holds coordinates that survive a trip
    /// through the value and back exactly).
    pub const REAL_STEPS: f64 = 10_000.0;

    /// The canonical coordinate of `u`: the one its value encodes to.
    pub fn canonical(&self, u: f64) -> f64 {
        match self {
            Domain::Real { .. } => {
                let u = if u.is_finite() {
                    u.clamp(0.0, 1.0)
                } else {
                    0.0
                };
                (u * Self::REAL_STEPS).round() / Self::REAL_STEPS
            }
            _ => self.encode(self.decode(u)),
        }
    }

    /// The value the coordinate `u` (clamped to [0, 1]) stands for: an integer, a real (at its canonical
    /// coordinate), or a choice's index.
    pub fn decode(&self, u: f64) -> f64 {
        let u = if u.is_finite() {
            u.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let u = match self {
            Domain::Real { .. } => (u * Self::REAL_STEPS).round() / Self::REAL_STEPS,
            _ => u,
        };
        match *self {
            Domain::Int { lo, hi, log: false } => (lo as f64 + u * (hi - lo) as f64).round(),
            Domain::Int { lo, hi, log: true } => {
                let (a, b) = ((lo.max(1) as f64).ln(), (hi.max(1) as f64).ln());
                (a + u * (b - a)).exp().round().clamp(lo as f64, hi as f64)
            }
            Domain::Real { lo, hi } => lo + u * (hi - lo),
            Domain::Choice(names) => {
                ((u * names.len() as f64).floor()).min(names.len() as f64 - 1.0)
            }
        }
    }

    /// The coordinate a value decodes from (values outside the domain are clamped into it; a choice's index
    /// maps to the middle of its share).
    pub fn encode(&self, v: f64) -> f64 {
        match *self {
            Domain::Int { lo, hi, .. } if hi <= lo => 0.5,
            Domain::Int { lo, hi, log: false } => {
                (v.clamp(lo as f64, hi as f64) - lo as f64) / (hi - lo) as f64
            }
            Domain::Int { lo, hi, log: true } => {
                let (a, b) = ((lo.max(1) as f64).ln(), (hi.max(1) as f64).ln());
                (v.clamp(lo.max(1) as f64, hi as f64).ln() - a) / (b - a)
            }
            Domain::Real { lo, hi } if hi <= lo => 0.5,
            Domain::Real { lo, hi } => (v.clamp(lo, hi) - lo) / (hi - lo),
            Domain::Choice(names) => {
                (v.clamp(0.0, names.len() as f64 - 1.0).floor() + 0.5) / names.len() as f64
            }
        }
    }

    /// A value as the repository writes it: a number, or a choice's name.
    pub fn to_json(&self, v: f64) -> Value {
        match *self {
            Domain::Int { .. } => Value::from(v as i64),
            Domain::Real { .. } => Value::from(v),
            Domain::Choice(names) => Value::from(names[v as usize]),
        }
    }

    /// A value as the repository wrote it.
    pub fn from_json(&self, v: &Value) -> Option<f64> {
        match *self {
            Domain::Choice(names) => names
                .iter()
                .position(|n| Some(*n) == v.as_str())
                .map(|i| i as f64),
            _ => v.as_f64(),
        }
    }
}

/// An engine's knobs, in a fixed order (the coordinates of a point).
#[derive(Clone, Debug, PartialEq)]
pub struct KnobSpace {
    /// The engine these knobs configure.
    pub engine: &'static str,
    /// The knobs.
    pub knobs: Vec<Knob>,
}

/// Knob values by name, as the repository records them.
pub type KnobValues = BTreeMap<String, Value>;

impl KnobSpace {
    /// Number of knobs (the dimension of a point).
    pub fn dim(&self) -> usize {
        self.knobs.len()
    }

    /// The canonical point of `u`'s configuration.
    pub fn canonical(&self, u: &[f64]) -> Vec<f64> {
        self.knobs
            .iter()
            .zip(u)
            .map(|(k, &x)| k.domain.canonical(x))
            .collect()
    }

    /// The knob values of a point.
    pub fn values(&self, u: &[f64]) -> KnobValues {
        self.knobs
            .iter()
            .zip(u)
            .map(|(k, &x)| (k.name.to_string(), k.domain.to_json(k.domain.decode(x))))
            .collect()
    }

    /// The point of recorded knob values (a knob missing or unreadable is an error).
    pub fn point(&self, values: &KnobValues) -> Result<Vec<f64>> {
        self.knobs
            .iter()
            .map(|k| {
                values
                    .get(k.name)
                    .and_then(|v| k.domain.from_json(v))
                    .map(|v| k.domain.canonical(k.domain.encode(v)))
                    .ok_or_else(|| {
                        Error::Knob(format!("{}: missing or not one of its values", k.name))
                    })
            })
            .collect()
    }

    fn index(&self, name: &str) -> usize {
        self.knobs
            .iter()
            .position(|k| k.name == name)
            .unwrap_or_else(|| panic!("knob {name} is not in the {} space", self.engine))
    }

    /// The decoded value of knob `name` at `u`.
    pub fn get(&self, u: &[f64], name: &str) -> f64 {
        let i = self.index(name);
        self.knobs[i].domain.decode(u[i])
    }

    /// The decoded choice of knob `name` at `u`.
    pub fn choice(&self, u: &[f64], name: &str) -> &'static str {
        let i = self.index(name);
        match self.knobs[i].domain {
            Domain::Choice(names) => names[self.knobs[i].domain.decode(u[i]) as usize],
            _ => panic!("knob {name} is not a choice"),
        }
    }
}

/// Shares of a stage of the memory split below which that part gets nothing (no filters, no entry cache).
pub const OFF_BELOW: f64 = 0.05;

const BLOCKS: &[&str] = &["4096", "8192", "16384", "32768"];
const FILES: &[&str] = &["1048576", "2097152", "4194304", "8388608"];
const COMPACTIONS: &[&str] = &["full", "partial", "hybrid"];
const RUN_STRATEGIES: &[&str] = &["first", "last_full", "fullest"];
const FILE_PICKINGS: &[&str] = &["oldest", "dense_fp", "sparse_fp", "choose_first"];
const GRANULARITIES: &[&str] = &["file", "block"];
const LOGS: &[&str] = &["hybrid", "append_only"];

/// Our engine's knobs: the design primitives and algorithmic choices of the template (Cosine Table 1), with
/// the memory budget split by shares so that every point keeps it.
pub fn cosine_space() -> KnobSpace {
    let real = |lo, hi| Domain::Real { lo, hi };
    KnobSpace {
        engine: "cosine",
        knobs: vec![
            Knob { name: "size_ratio", domain: Domain::Int { lo: 2, hi: 64, log: true }, doc: "T" },
            Knob { name: "hot_runs", domain: real(0.0, 1.0), doc: "K as a share of T-1 (1 + share x (T-2) runs)" },
            Knob { name: "cold_runs", domain: real(0.0, 1.0), doc: "Z as a share of T-1" },
            Knob { name: "buffer_share", domain: real(0.05, 0.8), doc: "M_B as a share of the memory" },
            Knob { name: "filter_share", domain: real(0.0, 0.9), doc: "M_BF as a share of what M_B leaves (none below 0.05)" },
            Knob { name: "cache_share", domain: real(0.0, 0.8), doc: "M_BC as a share of what M_B and M_BF leave (none below 0.05); M_FP gets the rest" },
            Knob { name: "block_bytes", domain: Domain::Choice(BLOCKS), doc: "block size" },
            Knob { name: "file_bytes", domain: Domain::Choice(FILES), doc: "file size" },
            Knob { name: "compaction", domain: Domain::Choice(COMPACTIONS), doc: "compaction kind" },
            Knob { name: "full_compaction_levels", domain: Domain::Int { lo: 1, hi: 3, log: false }, doc: "levels merged whole under hybrid compaction" },
            Knob { name: "run_strategy", domain: Domain::Choice(RUN_STRATEGIES), doc: "which runs a merge takes" },
            Knob { name: "file_picking", domain: Domain::Choice(FILE_PICKINGS), doc: "which file a partial compaction moves" },
            Knob { name: "merge_threshold", domain: real(0.5, 1.0), doc: "share of a level's capacity at which it is pushed down" },
            Knob { name: "filter_granularity", domain: Domain::Choice(GRANULARITIES), doc: "filters per file or per block" },
            Knob { name: "log", domain: Domain::Choice(LOGS), doc: "log kind of a hash-indexed (LSH) design" },
        ],
    }
}

/// Runs per level from a share of T − 1: 1 + round(share × (T − 2)).
fn runs_of(share: f64, t: u64) -> u64 {
    1 + (share.clamp(0.0, 1.0) * (t.saturating_sub(2)) as f64).round() as u64
}

/// The design of a point of [`cosine_space`] with `memory` bytes of engine memory. The class is left to the
/// engine's rule (Algorithm 3), so a design without filters and with T above the entries a block holds runs as
/// a log-structured hash table.
pub fn cosine_design(space: &KnobSpace, u: &[f64], memory: u64) -> Result<Design> {
    if space.engine != "cosine" || u.len() != space.dim() {
        return Err(Error::Knob(format!(
            "a point of {} coordinates is not a configuration of our engine ({} knobs)",
            u.len(),
            cosine_space().dim()
        )));
    }
    let t = space.get(u, "size_ratio") as u64;
    let m = memory as f64;
    let buffer = (space.get(u, "buffer_share") * m).max(4096.0);
    let rest = (m - buffer).max(0.0);
    let fs = space.get(u, "filter_share");
    let filters = if fs < OFF_BELOW { 0.0 } else { fs * rest };
    let rest = rest - filters;
    let cs = space.get(u, "cache_share");
    let cache = if cs < OFF_BELOW { 0.0 } else { cs * rest };
    let fences = rest - cache;
    let mut doc = Map::new();
    doc.insert("size_ratio".into(), Value::from(t));
    doc.insert(
        "hot_runs".into(),
        Value::from(runs_of(space.get(u, "hot_runs"), t)),
    );
    doc.insert(
        "cold_runs".into(),
        Value::from(runs_of(space.get(u, "cold_runs"), t)),
    );
    doc.insert("buffer_bytes".into(), Value::from(buffer as u64));
    doc.insert("filter_bytes".into(), Value::from(filters as u64));
    doc.insert("cache_bytes".into(), Value::from(cache as u64));
    doc.insert("fence_bytes".into(), Value::from(fences as u64));
    for (field, knob) in [("block_bytes", "block_bytes"), ("file_bytes", "file_bytes")] {
        let v: u64 = space.choice(u, knob).parse().unwrap_or(4096);
        doc.insert(field.into(), Value::from(v));
    }
    for knob in [
        "compaction",
        "run_strategy",
        "file_picking",
        "filter_granularity",
        "log",
    ] {
        doc.insert(knob.into(), Value::from(space.choice(u, knob)));
    }
    doc.insert(
        "full_compaction_levels".into(),
        Value::from(space.get(u, "full_compaction_levels") as u64),
    );
    doc.insert(
        "merge_threshold".into(),
        Value::from(space.get(u, "merge_threshold")),
    );
    doc.insert("threads".into(), Value::from(0));
    let design = Design::from_json(&Value::Object(doc).to_string())
        .map_err(|e| Error::Knob(format!("the knobs make no valid design: {e}")))?;
    Ok(design)
}

/// The point of [`cosine_space`] nearest a design (its memory split read as shares of `memory`; the class
/// and anything the space has no knob for are dropped).
pub fn cosine_point(space: &KnobSpace, design: &Design, memory: u64) -> Vec<f64> {
    let m = memory.max(1) as f64;
    let t = design.size_ratio;
    let share = |runs: u64| {
        if t <= 2 {
            0.5
        } else {
            (runs.saturating_sub(1)) as f64 / (t - 2) as f64
        }
    };
    let rest = (m - design.buffer_bytes as f64).max(1.0);
    let after_filters = (rest - design.filter_bytes as f64).max(1.0);
    let name_of = |v: Value| v.as_str().map(str::to_string).unwrap_or_default();
    let json = serde_json::to_value(design).unwrap_or(Value::Null);
    let field = |f: &str| name_of(json.get(f).cloned().unwrap_or(Value::Null));
    let choice = |names: &[&str], v: &str| names.iter().position(|n| *n == v).unwrap_or(0) as f64;
    let raw: Vec<(&str, f64)> = vec![
        ("size_ratio", t as f64),
        ("hot_runs", share(design.hot_runs)),
        ("cold_runs", share(design.cold_runs)),
        ("buffer_share", design.buffer_bytes as f64 / m),
        ("filter_share", design.filter_bytes as f64 / rest),
        ("cache_share", design.cache_bytes as f64 / after_filters),
        (
            "block_bytes",
            choice(BLOCKS, &design.block_bytes.to_string()),
        ),
        ("file_bytes", choice(FILES, &design.file_bytes.to_string())),
        ("compaction", choice(COMPACTIONS, &field("compaction"))),
        (
            "full_compaction_levels",
            design.full_compaction_levels as f64,
        ),
        (
            "run_strategy",
            choice(RUN_STRATEGIES, &field("run_strategy")),
        ),
        (
            "file_picking",
            choice(FILE_PICKINGS, &field("file_picking")),
        ),
        ("merge_threshold", design.merge_threshold),
        (
            "filter_granularity",
            choice(GRANULARITIES, &field("filter_granularity")),
        ),
        ("log", choice(LOGS, &field("log"))),
    ];
    space
        .knobs
        .iter()
        .map(|k| {
            let v = raw.iter().find(|(n, _)| *n == k.name).map_or(0.0, |r| r.1);
            k.domain.encode(v)
        })
        .collect()
}

/// Our engine's default configuration at `memory` bytes: the LSM-tree `cosine validate` and `cosine calibrate`
/// use as their LSM class design (RocksDB's shape: T = 10, leveled, a quarter of the memory for the buffer, a
/// quarter for filters, half for fences, 4 KiB blocks, 4 MiB files).
pub fn cosine_default(memory: u64) -> Design {
    let mut d = Design::rocksdb_like(memory / 4, memory / 4, memory / 2);
    d.block_bytes = 4096;
    d.file_bytes = 4 << 20;
    d.class = Some(DesignClass::Lsm);
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn domains_round_trip() {
        let t = Domain::Int {
            lo: 2,
            hi: 64,
            log: true,
        };
        for v in 2..=64 {
            assert_eq!(t.decode(t.encode(v as f64)), v as f64);
        }
        assert_eq!(t.decode(0.0), 2.0);
        assert_eq!(t.decode(1.0), 64.0);
        let c = Domain::Choice(COMPACTIONS);
        for i in 0..3 {
            assert_eq!(c.decode(c.encode(i as f64)), i as f64);
        }
        assert_eq!(c.decode(1.0), 2.0);
        assert_eq!(c.from_json(&c.to_json(1.0)), Some(1.0));
        let r = Domain::Real { lo: 0.5, hi: 1.0 };
        assert!((r.decode(r.encode(0.75)) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn the_default_and_a_model_pick_map_to_points_that_rebuild_them() {
        let space = cosine_space();
        let m = 8 << 20;
        let d = cosine_default(m);
        let u = cosine_point(&space, &d, m);
        let back = cosine_design(&space, &u, m).unwrap();
        assert_eq!(back.size_ratio, 10);
        assert_eq!((back.hot_runs, back.cold_runs), (1, 1));
        assert_eq!(back.block_bytes, 4096);
        assert_eq!(back.file_bytes, 4 << 20);
        // shares are kept to 1/10,000 of their range
        let near = |a: u64, b: u64| (a as f64 - b as f64).abs() <= 1e-4 * m as f64;
        assert!(near(back.buffer_bytes, d.buffer_bytes));
        assert!(near(back.filter_bytes, d.filter_bytes));
        assert_eq!(back.cache_bytes, 0);
        assert!(near(back.memory_bytes(), d.memory_bytes()));
    }

    proptest! {
        /// Every point of the unit cube is a valid design within the memory budget, and its canonical point
        /// decodes to the same design.
        #[test]
        fn every_point_is_a_valid_design_within_the_budget(
            u in proptest::collection::vec(0.0f64..=1.0, 15),
            memory in (1u64 << 20)..(64u64 << 20),
        ) {
            let space = cosine_space();
            let d = cosine_design(&space, &u, memory).unwrap();
            d.validate().unwrap();
            prop_assert!(d.memory_bytes() <= memory + 4096);
            let canon = space.canonical(&u);
            prop_assert_eq!(cosine_design(&space, &canon, memory).unwrap(), d);
            prop_assert_eq!(space.canonical(&canon), canon.clone());
            prop_assert_eq!(space.point(&space.values(&u)).unwrap(), canon);
        }
    }
}
