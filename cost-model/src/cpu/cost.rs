//! The CPU an operation costs, measured per engine and per operation type on one core (`cosine profile`): the
//! work the cores bound, which φ spreads over them (Eq. 2). An operation's CPU is its type's own (the engine's
//! code, with its blocks in memory), plus the CPU of each device read it makes (the kernel's miss path, the
//! copy, the checksum) and of each block its flushes, compactions or scan move in a sequential stream.

use crate::requests::OpIo;
use cosine_design::{DesignClass, OperationMix};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// CPU microseconds of one operation of each type on one core, its blocks in memory.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCpu {
    /// A point lookup, found or not.
    pub lookup_us: f64,
    /// An insert (the write buffer and the log).
    pub insert_us: f64,
    /// A blind update.
    pub blind_update_us: f64,
    /// A read-modify-write.
    pub rmw_us: f64,
    /// A scan's seek, before the entries it returns.
    pub scan_us: f64,
    /// Each entry a scan returns.
    pub scan_entry_us: f64,
    /// Each run a point lookup consults in memory (its filter, fences or hash index) beyond those of the
    /// store `lookup_us` was measured on: `lookup_us` is a lookup that consults none. 0 where it was not
    /// measured (a fixed system's single design, a library from before it was).
    #[serde(default)]
    pub probe_us: f64,
}

/// Why a CPU library could not be loaded.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CpuError {
    /// The file cannot be read.
    #[error(
        "cannot read {path} (give `learned` or a CPU library file from `cosine profile`): {reason}"
    )]
    Unreadable {
        /// The name or path given.
        path: String,
        /// The OS's reason.
        reason: String,
    },
    /// The JSON is malformed.
    #[error("malformed CPU library: {0}")]
    Malformed(String),
    /// A cost is negative or not a number.
    #[error(
        "CPU cost {entry}.{field} = {value} must be a finite non-negative number of microseconds"
    )]
    Range {
        /// The entry ("machine" for the per-read and per-block costs).
        entry: String,
        /// The field.
        field: &'static str,
        /// The value.
        value: f64,
    },
    /// A design class has no entry.
    #[error("CPU library has no entry for class {0}")]
    Missing(String),
}

/// The CPU costs of the engines the search prices: per design class of ours ("lsm", "btree", "lsh", "hybrid")
/// and per fixed system ("rocksdb", "wiredtiger", "faster"), with the machine-wide costs of a device read and
/// of a block moved in a sequential stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLibrary {
    /// Where the values come from (machine, date, method).
    pub machine: String,
    /// CPU microseconds of one device read (a block not in memory): the system call, the kernel's block layer
    /// and interrupt, the copy.
    pub read_us: f64,
    /// CPU microseconds per block a flush, a compaction or a scan moves sequentially (read or written, merged,
    /// checksummed).
    pub block_us: f64,
    /// Per class or system.
    pub entries: BTreeMap<String, OpCpu>,
}

impl Default for CpuLibrary {
    /// The library measured on this project's machine ([`CpuLibrary::learned`]).
    fn default() -> Self {
        CpuLibrary::learned()
    }
}

impl CpuLibrary {
    /// The library `cosine profile` measured on this project's 2-core development machine
    /// (`cost-model/data/cpu-learned.json`, with the machine's description). The default.
    pub fn learned() -> Self {
        CpuLibrary::from_json(include_str!("../../data/cpu-learned.json"))
            .expect("the shipped CPU library is valid (tested)")
    }

    /// A library by name (`learned`) or from a JSON file.
    pub fn named_or_file(name: &str) -> Result<Self, CpuError> {
        match name {
            "learned" => Ok(CpuLibrary::learned()),
            path => CpuLibrary::from_json(&std::fs::read_to_string(path).map_err(|e| {
                CpuError::Unreadable {
                    path: path.to_string(),
                    reason: e.to_string(),
                }
            })?),
        }
    }

    /// Parses and validates a CPU library (every cost finite and non-negative, every design class present).
    pub fn from_json(text: &str) -> Result<Self, CpuError> {
        let lib: CpuLibrary =
            serde_json::from_str(text).map_err(|e| CpuError::Malformed(e.to_string()))?;
        let check = |entry: &str, field: &'static str, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(CpuError::Range {
                    entry: entry.to_string(),
                    field,
                    value,
                })
            }
        };
        check("machine", "read_us", lib.read_us)?;
        check("machine", "block_us", lib.block_us)?;
        for (name, e) in &lib.entries {
            for (field, v) in [
                ("lookup_us", e.lookup_us),
                ("insert_us", e.insert_us),
                ("blind_update_us", e.blind_update_us),
                ("rmw_us", e.rmw_us),
                ("scan_us", e.scan_us),
                ("scan_entry_us", e.scan_entry_us),
                ("probe_us", e.probe_us),
            ] {
                check(name, field, v)?;
            }
        }
        for class in DesignClass::ALL {
            if !lib.entries.contains_key(class.as_str()) {
                return Err(CpuError::Missing(class.as_str().into()));
            }
        }
        Ok(lib)
    }

    /// The entry for a design class.
    pub fn class(&self, class: DesignClass) -> OpCpu {
        self.entries[class.as_str()]
    }

    /// The entry for a class or system by name.
    pub fn get(&self, name: &str) -> Option<OpCpu> {
        self.entries.get(name).copied()
    }

    /// CPU seconds one operation of `mix` costs on one core with the costs `op`: each type's own share (its
    /// blocks read from the page cache included), the entries its scans of `scan_length` return, the runs its
    /// lookups consult in memory, and the CPU of the device reads (those the page cache misses) and
    /// sequential blocks `io` says an operation makes.
    pub fn seconds_per_op(
        &self,
        op: &OpCpu,
        mix: &OperationMix,
        scan_length: u64,
        io: &OpIo,
    ) -> f64 {
        let own = (mix.lookup + mix.empty_lookup) * op.lookup_us
            + mix.insert * op.insert_us
            + mix.blind_update * op.blind_update_us
            + mix.rmw * op.rmw_us
            + mix.scan * (op.scan_us + scan_length as f64 * op.scan_entry_us)
            + io.run_probes * op.probe_us;
        (own + io.device_reads() * self.read_us + io.sequential_blocks * self.block_us) * 1e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learned_library_parses_and_covers_every_class_and_system() {
        let l = CpuLibrary::learned();
        assert_eq!(CpuLibrary::default(), l);
        assert!(l.machine.contains("cores"), "{}", l.machine);
        for name in [
            "lsm",
            "btree",
            "lsh",
            "hybrid",
            "rocksdb",
            "wiredtiger",
            "faster",
        ] {
            let e = l.get(name).unwrap_or_else(|| panic!("{name}"));
            assert!(e.lookup_us > 0.0 && e.insert_us > 0.0, "{name}: {e:?}");
        }
        assert!(l.read_us > 0.0 && l.block_us > 0.0);
    }

    #[test]
    fn a_negative_cost_or_a_missing_class_is_refused() {
        let text = serde_json::to_string(&CpuLibrary::learned()).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["read_us"] = serde_json::json!(-1.0);
        assert!(matches!(
            CpuLibrary::from_json(&v.to_string()),
            Err(CpuError::Range { .. })
        ));
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["entries"].as_object_mut().unwrap().remove("lsh");
        assert!(matches!(
            CpuLibrary::from_json(&v.to_string()),
            Err(CpuError::Missing(_))
        ));
        assert!(CpuLibrary::named_or_file("/nonexistent/cpu.json").is_err());
    }

    #[test]
    fn an_operation_costs_its_type_its_probes_its_reads_and_its_blocks() {
        let l = CpuLibrary::learned();
        let op = OpCpu {
            lookup_us: 2.0,
            insert_us: 3.0,
            blind_update_us: 3.0,
            rmw_us: 5.0,
            scan_us: 4.0,
            scan_entry_us: 0.1,
            probe_us: 0.25,
        };
        let mix = OperationMix {
            lookup: 0.5,
            scan: 0.5,
            ..Default::default()
        };
        let io = OpIo {
            random_reads: 2.0,
            sequential_blocks: 10.0,
            block_bytes: 4096.0,
            log_bytes: 0.0,
            cached_share: 0.0,
            run_probes: 8.0,
        };
        let s = l.seconds_per_op(&op, &mix, 100, &io);
        let want =
            0.5 * 2.0 + 0.5 * (4.0 + 10.0) + 8.0 * 0.25 + 2.0 * l.read_us + 10.0 * l.block_us;
        assert!((s * 1e6 - want).abs() < 1e-9, "{s} vs {want}");
    }
}
