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

    /// The point of knob values given by name (every knob of the space must be named).
    pub fn encode_all(&self, values: &[(&str, f64)]) -> Vec<f64> {
        self.knobs
            .iter()
            .map(|k| {
                let v = values.iter().find(|(n, _)| *n == k.name).map(|r| r.1);
                debug_assert!(v.is_some(), "no value for knob {}", k.name);
                k.domain.encode(v.unwrap_or(0.0))
            })
            .collect()
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
    space.encode_all(&raw)
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

const ROCKS_BLOCKS: &[&str] = &["4096", "8192", "16384", "32768", "65536"];
const ROCKS_STYLES: &[&str] = &["level", "universal"];
const ROCKS_COMPRESSIONS: &[&str] = &["none", "snappy", "lz4", "zstd"];
const BOOLS: &[&str] = &["false", "true"];

/// RocksDB's knobs: RTune's list (seed 001, §3.1: 22 knobs picked with RocksDB experts) less
/// `compression_ratio` (a db_bench data setting, not a knob) and `compaction_pri` (the rocksdb crate 0.20 has
/// no setter for it), with the memory budget split between the memtables (a share of it) and the block cache
/// (the rest), as our engine's knobs split M. Byte-sized knobs are scaled to the budget's world: level bases of
/// 1-256 MiB and files of 256 KiB-64 MiB.
pub fn rocksdb_space() -> KnobSpace {
    let real = |lo, hi| Domain::Real { lo, hi };
    let int = |lo, hi| Domain::Int { lo, hi, log: false };
    let log = |lo, hi| Domain::Int { lo, hi, log: true };
    KnobSpace {
        engine: "rocksdb",
        knobs: vec![
            Knob {
                name: "memtable_share",
                domain: real(0.05, 0.6),
                doc: "memtables' share of the memory (the block cache gets the rest)",
            },
            Knob {
                name: "max_write_buffer_number",
                domain: int(2, 6),
                doc: "memtables; write_buffer_size = their share / this",
            },
            Knob {
                name: "min_write_buffer_number_to_merge",
                domain: int(1, 3),
                doc: "memtables merged in a flush (at most max_write_buffer_number - 1)",
            },
            Knob {
                name: "bloom_bits_per_key",
                domain: real(0.0, 20.0),
                doc: "Bloom filter bits per key (none below 1)",
            },
            Knob {
                name: "block_size",
                domain: Domain::Choice(ROCKS_BLOCKS),
                doc: "data block size",
            },
            Knob {
                name: "cache_index_and_filter_blocks",
                domain: Domain::Choice(BOOLS),
                doc: "index and filter blocks in the block cache",
            },
            Knob {
                name: "level0_file_num_compaction_trigger",
                domain: log(1, 16),
                doc: "level-0 files that start a compaction",
            },
            Knob {
                name: "level0_slowdown_extra",
                domain: int(0, 32),
                doc: "level0_slowdown_writes_trigger above the compaction trigger",
            },
            Knob {
                name: "level0_stop_extra",
                domain: int(0, 32),
                doc: "level0_stop_writes_trigger above the slowdown trigger",
            },
            Knob {
                name: "max_bytes_for_level_base",
                domain: log(1 << 20, 256 << 20),
                doc: "level 1's target bytes",
            },
            Knob {
                name: "max_bytes_for_level_multiplier",
                domain: real(2.0, 16.0),
                doc: "size ratio between levels",
            },
            Knob {
                name: "target_file_size_base",
                domain: log(256 << 10, 64 << 20),
                doc: "level 1's file size",
            },
            Knob {
                name: "target_file_size_multiplier",
                domain: int(1, 4),
                doc: "file size growth per level",
            },
            Knob {
                name: "num_levels",
                domain: int(3, 8),
                doc: "levels",
            },
            Knob {
                name: "compaction_style",
                domain: Domain::Choice(ROCKS_STYLES),
                doc: "leveled or universal",
            },
            Knob {
                name: "max_background_jobs",
                domain: int(1, 8),
                doc: "flush and compaction threads",
            },
            Knob {
                name: "compression",
                domain: Domain::Choice(ROCKS_COMPRESSIONS),
                doc: "block compression",
            },
            Knob {
                name: "bloom_locality",
                domain: int(0, 1),
                doc: "Bloom probes kept in one cache line",
            },
            Knob {
                name: "memtable_prefix_bloom_size_ratio",
                domain: real(0.0, 0.25),
                doc: "memtable Bloom filter's share of a memtable",
            },
            Knob {
                name: "max_open_files",
                domain: log(32, 4096),
                doc: "table files kept open",
            },
        ],
    }
}

/// The RocksDB options of a point of [`rocksdb_space`] within `memory` bytes, as a JSON object of RocksDB's
/// option names (plus `block_cache_size`), which the peers crate turns into `rocksdb::Options`.
pub fn rocksdb_settings(space: &KnobSpace, u: &[f64], memory: u64) -> Result<Value> {
    if space.engine != "rocksdb" || u.len() != space.dim() {
        return Err(Error::Knob(format!(
            "a point of {} coordinates is not a RocksDB configuration ({} knobs)",
            u.len(),
            rocksdb_space().dim()
        )));
    }
    let g = |n: &str| space.get(u, n);
    let m = memory as f64;
    let buffers = g("max_write_buffer_number").max(2.0);
    let memtables = (g("memtable_share") * m).max(64.0 * 1024.0 * buffers);
    let write_buffer = (memtables / buffers) as u64;
    let cache = (m - memtables).max(64.0 * 1024.0) as u64;
    let bits = g("bloom_bits_per_key");
    let trigger = g("level0_file_num_compaction_trigger") as i64;
    let slowdown = trigger + g("level0_slowdown_extra") as i64;
    let stop = slowdown + g("level0_stop_extra") as i64;
    Ok(serde_json::json!({
        "write_buffer_size": write_buffer,
        "max_write_buffer_number": buffers as i64,
        "min_write_buffer_number_to_merge": (g("min_write_buffer_number_to_merge") as i64).min(buffers as i64 - 1),
        "bloom_bits_per_key": if bits < 1.0 { 0.0 } else { bits },
        "block_size": space.choice(u, "block_size").parse::<u64>().unwrap_or(4096),
        "cache_index_and_filter_blocks": space.choice(u, "cache_index_and_filter_blocks") == "true",
        "level0_file_num_compaction_trigger": trigger,
        "level0_slowdown_writes_trigger": slowdown,
        "level0_stop_writes_trigger": stop,
        "max_bytes_for_level_base": g("max_bytes_for_level_base") as u64,
        "max_bytes_for_level_multiplier": g("max_bytes_for_level_multiplier"),
        "target_file_size_base": g("target_file_size_base") as u64,
        "target_file_size_multiplier": g("target_file_size_multiplier") as i64,
        "num_levels": g("num_levels") as i64,
        "compaction_style": space.choice(u, "compaction_style"),
        "max_background_jobs": g("max_background_jobs") as i64,
        "compression": space.choice(u, "compression"),
        "bloom_locality": g("bloom_locality") as i64,
        "memtable_prefix_bloom_size_ratio": g("memtable_prefix_bloom_size_ratio"),
        "max_open_files": g("max_open_files") as i64,
        "block_cache_size": cache,
    }))
}

/// RocksDB's configuration in the peer benchmark at `memory` bytes (its tuning guide's split: two memtables of
/// M/8, a block cache of 3M/4 holding the index and filter blocks, 10 Bloom bits a key, 4 KiB blocks, no
/// compression) with RocksDB's own defaults for everything else, and the point nearest it.
pub fn rocksdb_defaults(space: &KnobSpace, memory: u64) -> (Vec<f64>, Value) {
    leveled_rocksdb(
        space,
        Leveled {
            memtable: memory / 8,
            share: 0.25,
            cache: memory * 3 / 4,
            bits: 10.0,
            block: 0,
            base: 256 << 20,
            multiplier: 10.0,
        },
    )
}

/// The least block cache a design mapped onto RocksDB keeps (its index and filter blocks live there).
pub const ROCKS_MIN_CACHE: u64 = 1 << 20;

/// How a design's write buffer of `flush_bytes` a memtable and `memory` in all split in RocksDB: two memtables
/// of `flush_bytes` (at least 1 MiB, RocksDB's smallest useful memtable) and the rest of `memory` the block
/// cache, which keeps at least [`ROCKS_MIN_CACHE`]; where the memtables would leave it less, they shrink, so
/// the two together never hold more than `memory` (from 3 MiB up; below it the floors win). Returns
/// (`write_buffer_size`, `block_cache_size`).
pub fn rocksdb_memory_split(flush_bytes: u64, memory: u64) -> (u64, u64) {
    let fits = memory.saturating_sub(ROCKS_MIN_CACHE) / 2;
    let memtable = flush_bytes.max(1 << 20).min(fits.max(1 << 20));
    let cache = memory.saturating_sub(2 * memtable).max(ROCKS_MIN_CACHE);
    (memtable, cache)
}

/// A leveled LSM design of our engine in RocksDB's terms (what the peer benchmark's `rocksdb-cosine` runs):
/// two memtables of M_B/2 and the rest of `memory` the block cache, as [`rocksdb_memory_split`] keeps them
/// within `memory`, the design's filter memory as Bloom bits per key over `entries`, its block size, level
/// style with multiplier T and a base of T memtables; RocksDB's defaults for the rest. With the point of
/// [`rocksdb_space`] nearest it (a knob's range clamps what it cannot hold, e.g. T above 16).
pub fn rocksdb_from_design(
    space: &KnobSpace,
    design: &cosine_design::Design,
    entries: u64,
    memory: u64,
) -> (Vec<f64>, Value) {
    let (memtable, cache) = rocksdb_memory_split(design.flush_bytes(), memory);
    let t = design.size_ratio.max(2);
    leveled_rocksdb(
        space,
        Leveled {
            memtable,
            share: (2 * memtable) as f64 / memory.max(1) as f64,
            cache,
            bits: design.filter_bytes as f64 * 8.0 / entries.max(1) as f64,
            block: ROCKS_BLOCKS
                .iter()
                .position(|b| b.parse::<u64>().ok() == Some(design.block_bytes))
                .unwrap_or(0),
            base: t * memtable,
            multiplier: t as f64,
        },
    )
}

/// What sets a leveled RocksDB configuration apart from RocksDB's defaults here.
struct Leveled {
    /// `write_buffer_size` of each of the two memtables.
    memtable: u64,
    /// Both memtables' share of the memory, as the `memtable_share` knob.
    share: f64,
    /// `block_cache_size`.
    cache: u64,
    /// Bloom bits per key (none below 1).
    bits: f64,
    /// Index of the block size in the knob's choices.
    block: usize,
    /// `max_bytes_for_level_base`.
    base: u64,
    /// `max_bytes_for_level_multiplier`.
    multiplier: f64,
}

/// The settings of a leveled configuration (two memtables, level style, no compression, RocksDB's defaults
/// for the other knobs) and the point of `space` nearest it.
fn leveled_rocksdb(space: &KnobSpace, l: Leveled) -> (Vec<f64>, Value) {
    let settings = serde_json::json!({
        "write_buffer_size": l.memtable,
        "max_write_buffer_number": 2,
        "min_write_buffer_number_to_merge": 1,
        "bloom_bits_per_key": if l.bits < 1.0 { 0.0 } else { l.bits },
        "block_size": ROCKS_BLOCKS[l.block].parse::<u64>().unwrap_or(4096),
        "cache_index_and_filter_blocks": true,
        "level0_file_num_compaction_trigger": 4,
        "level0_slowdown_writes_trigger": 20,
        "level0_stop_writes_trigger": 36,
        "max_bytes_for_level_base": l.base,
        "max_bytes_for_level_multiplier": l.multiplier,
        "target_file_size_base": 64u64 << 20,
        "target_file_size_multiplier": 1,
        "num_levels": 7,
        "compaction_style": "level",
        "max_background_jobs": 2,
        "compression": "none",
        "bloom_locality": 0,
        "memtable_prefix_bloom_size_ratio": 0.0,
        "max_open_files": -1,
        "block_cache_size": l.cache,
    });
    let raw: Vec<(&str, f64)> = vec![
        ("memtable_share", l.share),
        ("max_write_buffer_number", 2.0),
        ("min_write_buffer_number_to_merge", 1.0),
        ("bloom_bits_per_key", l.bits),
        ("block_size", l.block as f64),
        ("cache_index_and_filter_blocks", 1.0),
        ("level0_file_num_compaction_trigger", 4.0),
        ("level0_slowdown_extra", 16.0),
        ("level0_stop_extra", 16.0),
        ("max_bytes_for_level_base", l.base as f64),
        ("max_bytes_for_level_multiplier", l.multiplier),
        ("target_file_size_base", (64u64 << 20) as f64),
        ("target_file_size_multiplier", 1.0),
        ("num_levels", 7.0),
        ("compaction_style", 0.0),
        ("max_background_jobs", 2.0),
        ("compression", 0.0),
        ("bloom_locality", 0.0),
        ("memtable_prefix_bloom_size_ratio", 0.0),
        ("max_open_files", 4096.0),
    ];
    (space.encode_all(&raw), settings)
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
    fn a_leveled_design_maps_onto_rocksdb_knobs_and_its_nearest_point() {
        let space = rocksdb_space();
        let m = 8u64 << 20;
        let mut d = cosine_design::Design::rocksdb_like(4 << 20, 250_000, 1 << 20);
        d.size_ratio = 8;
        let (point, s) = rocksdb_from_design(&space, &d, 200_000, m);
        assert_eq!(s["write_buffer_size"], 2u64 << 20);
        assert_eq!(s["block_cache_size"], 4u64 << 20);
        assert_eq!(s["max_bytes_for_level_multiplier"], 8.0);
        assert_eq!(s["max_bytes_for_level_base"], 16u64 << 20);
        assert_eq!(s["bloom_bits_per_key"], 10.0);
        // the nearest point of the knob space rebuilds the same memory split, ratio and filters
        let back = rocksdb_settings(&space, &point, m).unwrap();
        for k in ["block_size", "compaction_style", "compression"] {
            assert_eq!(back[k], s[k], "{k}");
        }
        for k in [
            "write_buffer_size",
            "block_cache_size",
            "max_bytes_for_level_base",
            "max_bytes_for_level_multiplier",
            "bloom_bits_per_key",
        ] {
            let (a, b) = (back[k].as_f64().unwrap(), s[k].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-3 * b, "{k}: {a} against {b}");
        }
    }

    #[test]
    fn a_design_mapped_onto_rocksdb_keeps_its_memory() {
        // a design that gives nearly all of 4 MiB to its buffer: the memtables shrink to leave the cache its
        // floor (they held 2 × 1.95 MiB beside a 1 MiB cache, 4.9 MiB in all, before)
        let m = 4u64 << 20;
        let (memtable, cache) = rocksdb_memory_split(2_040_000, m);
        assert_eq!(cache, ROCKS_MIN_CACHE);
        assert_eq!(2 * memtable + cache, m - m % 2);
        // a design whose buffer fits keeps it, the cache what is left
        assert_eq!(rocksdb_memory_split(1 << 20, 8 << 20), (1 << 20, 6 << 20));
        // at every buffer of every budget from 3 MiB, the two together hold at most the budget
        for memory in [3u64 << 20, 4 << 20, 5_000_000, 32 << 20] {
            for flush in [0, 1, 500_000, 1 << 20, 3 << 20, 40 << 20] {
                let (mt, c) = rocksdb_memory_split(flush, memory);
                assert!(2 * mt + c <= memory, "{flush} {memory}: {mt} {c}");
                assert!(c >= ROCKS_MIN_CACHE && mt >= 1 << 20);
            }
        }
        let space = rocksdb_space();
        let mut d = cosine_design::Design::rocksdb_like(3_900_000, 20_000, 100_000);
        d.size_ratio = 4;
        let (_, s) = rocksdb_from_design(&space, &d, 20_000, m);
        let n = |k: &str| s[k].as_u64().unwrap();
        assert!(
            2 * n("write_buffer_size") + n("block_cache_size") <= m,
            "{s}"
        );
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

    #[test]
    fn rocksdb_points_keep_the_budget_and_the_triggers_in_order() {
        let space = rocksdb_space();
        for u in crate::lhs::latin_hypercube(200, space.dim(), 5) {
            let s = rocksdb_settings(&space, &u, 8 << 20).unwrap();
            let n = |k: &str| s[k].as_f64().unwrap();
            let memtables = n("write_buffer_size") * n("max_write_buffer_number");
            assert!(
                memtables + n("block_cache_size") <= (8 << 20) as f64 + 1.0,
                "{s}"
            );
            assert!(n("level0_slowdown_writes_trigger") >= n("level0_file_num_compaction_trigger"));
            assert!(n("level0_stop_writes_trigger") >= n("level0_slowdown_writes_trigger"));
            assert!(n("min_write_buffer_number_to_merge") < n("max_write_buffer_number"));
            assert!(n("bloom_bits_per_key") == 0.0 || n("bloom_bits_per_key") >= 1.0);
        }
        let (p, d) = rocksdb_defaults(&space, 8 << 20);
        assert_eq!(p.len(), space.dim());
        assert_eq!(d["write_buffer_size"], 1 << 20);
        // the defaults' point decodes to the defaults' split
        let back = rocksdb_settings(&space, &p, 8 << 20).unwrap();
        let wb = back["write_buffer_size"].as_f64().unwrap();
        assert!((wb / (1 << 20) as f64 - 1.0).abs() < 1e-3, "{wb}");
        assert_eq!(back["level0_stop_writes_trigger"], 36);
        assert_eq!(back["compaction_style"], "level");
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
