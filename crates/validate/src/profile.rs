//! `cosine profile`: this machine measured ([`crate::probe`]: cores, memory, the disk), the CPU an operation
//! costs our engine per design class ([`crate::measure_engine_cpu`]) and the engine's memory beyond its design
//! ([`crate::overhead`]), written as a catalog of one VM, `local`, that the search prices exactly as it prices a
//! cloud VM, and a CPU library.

use crate::overhead::{overhead_line, Held};
use crate::probe::{DiskProfile, Host};
use crate::CpuMeasured;
use cosine_cost_model::cpu::CpuLibrary;
use cosine_design::DesignClass;
use serde_json::json;

/// The page cache a memory cgroup must leave its engine besides the design and the engine's overhead (the log
/// and the compactions stream through it, and the cgroup is charged for it): 16 MiB and 5% of the limit. An
/// assumption, stated in the catalog it writes.
pub const CGROUP_PAGE_CACHE: (f64, f64) = (16.0 * 1024.0 * 1024.0, 0.05);

/// Everything `cosine profile` measured.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Cores and memory.
    pub host: Host,
    /// Memory the catalog's VM gets (the host's, or the limit the engine will run under).
    pub memory_bytes: u64,
    /// Whether that memory is a cgroup's limit (the operating system outside it).
    pub cgroup: bool,
    /// The disk.
    pub disk: DiskProfile,
    /// Block bytes of the disk's random reads.
    pub block_bytes: u64,
    /// CPU per design class.
    pub cpu: Vec<(DesignClass, CpuMeasured)>,
    /// CPU microseconds of a flushed or compacted block.
    pub block_us: Option<f64>,
    /// The engine's memory at two design sizes.
    pub overhead: Option<(Held, Held)>,
    /// Today, `YYYY-MM-DD`.
    pub as_of: String,
}

impl Profile {
    /// The engine's memory beyond its design: (bytes, share of the design's memory).
    pub fn engine_overhead(&self) -> Option<(f64, f64)> {
        self.overhead.as_ref().map(|(a, b)| overhead_line(a, b))
    }

    /// Memory the operating system keeps outside the engine: none of a cgroup's limit but the page cache the
    /// engine's files need ([`CGROUP_PAGE_CACHE`]); a whole machine's, a cloud VM's reserve.
    pub fn os_reserve(&self) -> (f64, f64) {
        if self.cgroup {
            CGROUP_PAGE_CACHE
        } else {
            cosine_cloud_pricing::CLOUD_OS_RESERVE
        }
    }

    /// The catalog of this one machine (`cosine_cloud_pricing::LOCAL_SCHEMA`), priced at a nominal $1 an hour.
    pub fn catalog_json(&self) -> serde_json::Value {
        let d = &self.disk;
        let (os_bytes, os_share) = self.os_reserve();
        let mut v = json!({
            "schema": cosine_cloud_pricing::LOCAL_SCHEMA,
            "as_of": self.as_of,
            "description": format!(
                "this machine as cosine profile measured it: {} cores, {} MiB{}; disk {}",
                self.host.cores,
                self.memory_bytes >> 20,
                if self.cgroup { " (a memory cgroup's limit)" } else { "" },
                if d.direct { "read with O_DIRECT" } else { "read through the page cache (O_DIRECT refused)" }
            ),
            "hours_per_month": 730.0,
            "vm": {
                "name": "local",
                "vcpus": self.host.cores,
                "memory_bytes": self.memory_bytes,
                "hourly_usd": 1.0
            },
            "volume": {
                "name": "local disk",
                "iops": d.iops(),
                "mibps": d.write_mibps.min(d.read_mibps),
                // what a read waits beyond its own CPU (which the CPU library charges), at the depth the engine
                // keeps in flight by default: one read a core
                "read_latency_us": d.wait_at(self.host.cores as usize),
                "block_bytes": self.block_bytes
            },
            "os_reserve": {"bytes": os_bytes, "share": os_share},
            "measured": {
                "queue_depths": d.depths.iter().map(|p| json!({
                    "depth": p.depth, "iops": p.iops, "latency_us": p.latency_us
                })).collect::<Vec<_>>(),
                "write_mibps": d.write_mibps,
                "read_mibps": d.read_mibps,
                "fsync_us": d.fsync_us,
                "device_read_cpu_us": d.device_read_cpu_us,
                "read_latency_note": "the volume's read_latency_us is the latency at the default depth less the CPU of an O_DIRECT read (the CPU library charges a read's CPU apart)",
                "cached_read_cpu_us": d.cached_read_cpu_us,
                "buffered_miss_cpu_us": d.buffered_miss_cpu_us,
                "miss_under_pressure": d.miss_under_pressure,
                "o_direct": d.direct,
                "warnings": d.warnings,
                "os_reserve_note": if self.cgroup {
                    "a cgroup: the page cache the engine's files need (16 MiB + 5%, an assumption)"
                } else {
                    "a whole machine: the cloud VM reserve (512 MiB + 2%, an assumption)"
                },
                "engine_at_two_sizes": self.overhead.as_ref().map(|(a, b)| [a, b].map(|h| json!({
                    "design_bytes": h.design_bytes,
                    "resident_bytes": h.resident_bytes,
                    "structures_bytes": h.structures_bytes
                })))
            }
        });
        if let Some((bytes, share)) = self.engine_overhead() {
            v["engine_overhead"] = json!({"bytes": bytes, "share": share});
        }
        v
    }

    /// The CPU library: our design classes as measured here, the device read's CPU beyond a cached read's,
    /// the background block's; the fixed systems' entries from `base` (`cosine-peers --measure-cpu` measures
    /// them).
    pub fn cpu_library(&self, base: &CpuLibrary) -> CpuLibrary {
        let mut lib = base.clone();
        for (class, m) in &self.cpu {
            lib.entries.insert(class.as_str().to_string(), m.op);
        }
        // the engine reads through the page cache: a miss's CPU beyond a hit's (which the per-type costs hold)
        lib.read_us = (self.disk.buffered_miss_cpu_us - self.disk.cached_read_cpu_us).max(0.0);
        if let Some(b) = self.block_us {
            lib.block_us = b;
        }
        lib.machine = format!(
            "{} cores, {} GiB; cosine profile on {} (each operation type on one thread, its data in memory, its \
             writes in the buffer; read_us: a {}-byte read through the page cache that misses it{}, less one that \
             hits; block_us: the LSM class's load beyond its inserts, over the blocks it flushed and compacted)",
            self.host.cores,
            self.host.memory_bytes >> 30,
            self.as_of,
            self.block_bytes,
            if self.disk.miss_under_pressure {
                " with the page cache full (each miss reclaims a page)"
            } else {
                ""
            }
        );
        lib
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    // civil from days (H. Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10, "{t}");
        assert!(t.starts_with("20"), "{t}");
    }
}
