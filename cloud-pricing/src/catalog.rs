//! The normalised catalog: providers, their VM types, the block storage each VM's shard lives on, and SLA
//! add-on prices. Loaded from the catalog JSON (embedded at build time, or a newer file) with validation that
//! names the bad entry.

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A catalog that cannot be used.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CatalogError {
    /// Not JSON.
    #[error("catalog is not valid JSON: {0}")]
    Json(String),
    /// An entry is missing a field or has a bad value.
    #[error("catalog entry {entry}: {problem}")]
    Entry {
        /// Where, e.g. `providers.aws.vms[3] (r5.2xlarge)`.
        entry: String,
        /// What is wrong.
        problem: String,
    },
    /// A file could not be read.
    #[error("cannot read catalog {0}: {1}")]
    Io(String, String),
}

/// One VM type.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VmType {
    /// Instance type name.
    pub name: String,
    /// Family (r5, n1-highmem, Esv3, ...).
    pub family: String,
    /// vCPUs.
    pub vcpus: u32,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// On-demand price per hour, USD.
    pub hourly_usd: f64,
    /// Disk IOPS cap of the VM, if the provider publishes one.
    pub max_disk_iops: Option<f64>,
    /// Disk throughput cap in MiB/s, if published.
    pub max_disk_mibps: Option<f64>,
    /// Whether the paper's set includes it.
    pub in_paper_set: bool,
}

impl VmType {
    /// Memory in GiB.
    pub fn memory_gib(&self) -> f64 {
        self.memory_bytes as f64 / GIB
    }
}

/// One tier of a slab-priced disk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slab {
    /// Tier name (P30, ...).
    pub tier: String,
    /// Size in GiB.
    pub size_gib: f64,
    /// IOPS of the tier.
    pub iops: f64,
    /// Throughput in MiB/s.
    pub mibps: f64,
    /// Monthly price.
    pub monthly_usd: f64,
}

/// How a provider's block storage is priced and how many IOPS it gives.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Storage {
    /// Priced per GB-month with an IOPS rule (AWS gp3, GCP pd-ssd).
    PerGb {
        /// Volume type.
        name: String,
        /// USD per GB-month.
        price_per_gb_month: f64,
        /// GB free (the paper's AWS 75 GB).
        free_gb: f64,
        /// IOPS included regardless of size.
        baseline_iops: f64,
        /// IOPS per GiB of volume (size-proportional rules).
        iops_per_gib: f64,
        /// IOPS ceiling per volume.
        max_iops: f64,
        /// USD per provisioned IOPS-month above the baseline (0 when IOPS are not provisioned).
        price_per_iops_month: f64,
        /// Throughput included, MiB/s.
        baseline_mibps: f64,
        /// Throughput per GiB of volume.
        mibps_per_gib: f64,
        /// Throughput ceiling, MiB/s.
        max_mibps: f64,
        /// USD per provisioned MiB/s-month above the baseline.
        price_per_mibps_month: f64,
    },
    /// Flat tiers: the size rounds up to the next priced tier (Azure premium SSD).
    Slabs {
        /// Disk type.
        name: String,
        /// Tiers by size, only those with a price.
        slabs: Vec<Slab>,
    },
    /// One disk as measured (`cosine profile` on a machine of one's own): the IOPS and bandwidth it gave,
    /// whatever the data's size, at no price of its own.
    Fixed {
        /// What the disk is.
        name: String,
        /// Requests a second it served at the deepest queue measured.
        iops: f64,
        /// MiB a second it moved.
        mibps: f64,
    },
}

/// How support ("devops"/tooling) is priced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SupportPlan {
    /// Plan name.
    pub name: String,
    /// Minimum monthly charge.
    pub monthly_minimum_usd: f64,
    /// Flat monthly fee added to the bands.
    pub monthly_fixed_usd: f64,
    /// Marginal bands (up to USD of monthly spend, rate).
    pub bands: Vec<(Option<f64>, f64)>,
    /// Per-instance monthly fee (the paper's AWS $0.02).
    pub per_instance_usd: f64,
    /// Per-instance fee by VM type index (the paper's GCP rule), if any.
    pub per_type_usd: Vec<f64>,
}

/// SLA add-on prices of one provider (Cosine Section 5's five features).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlaPrices {
    /// Migration: USD per GB of data (paper) plus a flat monthly fee (a migration-service instance).
    pub migration_per_gb: f64,
    /// Monthly fee of the migration service.
    pub migration_monthly_usd: f64,
    /// Backup: USD per GB-month of data.
    pub backup_per_gb_month: f64,
    /// Support plan (the paper's devops/tooling).
    pub support: SupportPlan,
    /// Reliability (cross-region recovery): USD per instance-month; None where the catalog has no offer.
    pub reliability_per_instance: Option<f64>,
    /// Availability: instances needed for the multi-zone uptime SLA.
    pub availability_min_instances: u32,
    /// The multi-zone uptime, percent.
    pub availability_percent: f64,
}

/// One provider.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provider {
    /// "aws", "gcp" or "azure".
    pub id: String,
    /// Region of the prices.
    pub region: String,
    /// I/O block size in bytes that IOPS are counted in.
    pub block_bytes: u64,
    /// VM types.
    pub vms: Vec<VmType>,
    /// Block storage.
    pub storage: Storage,
    /// Whether storage is priced once for all the data (the paper) or per VM volume (today).
    pub storage_per_vm: bool,
    /// The paper's IOPS rule, where it replaces the volume's own (AWS bandwidth / GCP read-write mix).
    pub paper_iops: Option<PaperIops>,
    /// SLA add-ons.
    pub sla: SlaPrices,
    /// Seconds one random read takes at the volume when none is queued: a network SSD's
    /// ([`NETWORK_SSD_READ_LATENCY_S`]), or a disk's as `cosine profile` measured it.
    pub read_latency_s: f64,
    /// Memory each VM keeps for its operating system: a fixed part in bytes and a share of the VM's memory
    /// ([`CLOUD_OS_RESERVE`]; none where the memory given is a cgroup's limit, the system outside it).
    pub os_reserve: (f64, f64),
    /// The engine's own memory beyond its design, where `cosine profile` measured it on this machine: a fixed
    /// part in bytes and a share of the design's memory.
    pub engine_overhead: Option<(f64, f64)>,
}

/// Seconds a random read takes on a provider's general-purpose network SSD when none is queued: 1 ms, the low
/// end of the "single-digit millisecond" latency AWS states for EBS gp3 and Azure for premium SSD. An
/// assumption, not a measurement (the catalog's sources give no latency); `cosine profile` measures a disk of
/// one's own, and `cosine search --volume-latency-us` prices another.
pub const NETWORK_SSD_READ_LATENCY_S: f64 = 1e-3;

/// Memory a cloud VM keeps for its operating system outside a design: 512 MiB (the kernel, its page tables
/// and the agents a cloud image runs) and 2% of the VM's memory (slab caches, network buffers, the page cache
/// the log and compactions stream through). An assumption stated here; `cosine search --os-reserve` changes it.
pub const CLOUD_OS_RESERVE: (f64, f64) = (512.0 * 1024.0 * 1024.0, 0.02);

/// The IOPS rules of the authors' code (MODEL.md §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum PaperIops {
    /// min(cap, MB/s·10^6 / block bytes).
    Bandwidth {
        /// MB/s.
        mb_per_s: f64,
        /// IOPS cap.
        cap: f64,
    },
    /// min(cap, (reads·read MB/s + writes·write MB/s)·10^6 / block bytes).
    ReadWriteMix {
        /// Read MB/s.
        read_mb_per_s: f64,
        /// Write MB/s.
        write_mb_per_s: f64,
        /// IOPS cap.
        cap: f64,
    },
}

/// A price catalog.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Catalog {
    /// "current" or "paper".
    pub name: String,
    /// Date of the prices.
    pub as_of: String,
    /// Hours billed per month.
    pub hours_per_month: f64,
    /// Providers.
    pub providers: Vec<Provider>,
}

/// The catalog JSON shipped with the crate (copied from shared/data, with sources for every figure).
pub const EMBEDDED_JSON: &str = include_str!("../data/cloud-pricing.json");

/// Block size IOPS are counted in for today's prices: 16 KiB on every provider.
pub const CURRENT_BLOCK_BYTES: u64 = 16 * 1024;

mod current;
mod local;
mod paper;

pub use current::parse_current;
pub use local::{parse_local, LOCAL_SCHEMA};
pub use paper::paper;

/// The catalog by name: "current" (the embedded file), "paper", or a path to a newer catalog file or to a
/// machine's own catalog from `cosine profile` ([`LOCAL_SCHEMA`]).
pub fn load(spec: &str) -> Result<Catalog, CatalogError> {
    match spec {
        "current" | "" => parse_current(EMBEDDED_JSON),
        "paper" => Ok(paper()),
        path => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CatalogError::Io(path.into(), e.to_string()))?;
            let schema = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("schema").and_then(Value::as_str).map(str::to_string));
            if schema.as_deref() == Some(LOCAL_SCHEMA) {
                parse_local(&text)
            } else {
                parse_current(&text)
            }
        }
    }
}
