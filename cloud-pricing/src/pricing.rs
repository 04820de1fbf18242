//! Pricing functions: what a configuration of VMs costs per month (compute + storage for the data + SLA
//! add-ons, Cosine Section 5) and how many IOPS each of its VMs gets.

use crate::catalog::{Catalog, PaperIops, Provider, Storage};
use serde::Serialize;
use thiserror::Error;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Volumes are provisioned for this multiple of a shard's data (room for space amplification).
pub const VOLUME_HEADROOM: f64 = 1.5;

/// The five SLA features of Cosine Section 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Sla {
    /// Database migration service.
    Migration,
    /// Support plan (the paper's devops/tooling).
    Support,
    /// Snapshots of the data.
    Backup,
    /// Cross-region recovery.
    Reliability,
    /// Multi-zone deployment (the higher uptime SLA needs at least two instances).
    Availability,
}

impl Sla {
    /// Parses a name (migration, support/devops/tooling, backup, reliability, availability).
    pub fn parse(s: &str) -> Option<Sla> {
        match s.trim().to_ascii_lowercase().as_str() {
            "migration" => Some(Sla::Migration),
            "support" | "devops" | "tooling" => Some(Sla::Support),
            "backup" => Some(Sla::Backup),
            "reliability" => Some(Sla::Reliability),
            "availability" => Some(Sla::Availability),
            _ => None,
        }
    }
}

/// Why a configuration cannot be priced as asked.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum PricingError {
    /// The provider's catalog has no offer for an SLA feature.
    #[error("{provider} offers no {sla:?} add-on in this catalog")]
    Unavailable {
        /// Provider.
        provider: String,
        /// Feature.
        sla: Sla,
    },
    /// The SLA needs more instances than the configuration has.
    #[error("availability needs at least {needed} instances")]
    TooFewInstances {
        /// Instances needed.
        needed: u32,
    },
}

/// What one volume costs and delivers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct VolumeQuote {
    /// Size in GiB.
    pub size_gib: f64,
    /// Monthly cost.
    pub monthly_usd: f64,
    /// IOPS before any VM cap.
    pub iops: f64,
    /// Throughput in MiB/s before any VM cap.
    pub mibps: f64,
}

/// A volume for `data_bytes` of data on `provider`'s storage (already including any headroom).
pub fn volume(provider: &Provider, data_bytes: f64) -> VolumeQuote {
    let gib = (data_bytes / GIB).max(1.0);
    match &provider.storage {
        Storage::PerGb {
            price_per_gb_month,
            free_gb,
            baseline_iops,
            iops_per_gib,
            max_iops,
            price_per_iops_month,
            baseline_mibps,
            mibps_per_gib,
            max_mibps,
            price_per_mibps_month,
            ..
        } => {
            let iops = max_iops.min(baseline_iops.max(iops_per_gib * gib));
            let mibps = max_mibps.min(baseline_mibps.max(mibps_per_gib * gib));
            let extra_iops = if baseline_iops.is_finite() {
                (iops - baseline_iops).max(0.0)
            } else {
                0.0
            };
            let extra_mibps = if baseline_mibps.is_finite() {
                (mibps - baseline_mibps).max(0.0)
            } else {
                0.0
            };
            let monthly = (gib - free_gb).max(0.0) * price_per_gb_month
                + extra_iops * price_per_iops_month
                + extra_mibps * price_per_mibps_month;
            VolumeQuote {
                size_gib: gib,
                monthly_usd: monthly,
                iops,
                mibps,
            }
        }
        Storage::Fixed { iops, mibps, .. } => VolumeQuote {
            size_gib: gib,
            monthly_usd: 0.0,
            iops: *iops,
            mibps: *mibps,
        },
        Storage::Slabs { slabs, .. } => match slabs.iter().find(|s| s.size_gib >= gib) {
            Some(s) => VolumeQuote {
                size_gib: s.size_gib,
                monthly_usd: s.monthly_usd,
                iops: s.iops,
                mibps: s.mibps,
            },
            None => {
                // beyond the largest priced tier: stripe over several of them
                let top = slabs
                    .last()
                    .expect("catalog validation keeps at least one tier");
                let k = (gib / top.size_gib).ceil();
                VolumeQuote {
                    size_gib: k * top.size_gib,
                    monthly_usd: k * top.monthly_usd,
                    iops: k * top.iops,
                    mibps: k * top.mibps,
                }
            }
        },
    }
}

/// The price of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quote {
    /// VM hours.
    pub compute_usd: f64,
    /// Block storage.
    pub storage_usd: f64,
    /// SLA add-ons.
    pub sla_usd: f64,
    /// Everything per month.
    pub total_usd: f64,
    /// IOPS available to one VM of each type in the configuration (same order as the counts): its volume's
    /// within the VM's cap (the paper's catalog: its IOPS rule, which counts bandwidth in blocks).
    pub iops_per_vm: Vec<f64>,
    /// MiB a second one VM of each type moves: its volume's bandwidth within the VM's cap (the paper's
    /// catalog: unbounded, its IOPS rule being its limit).
    pub mibps_per_vm: Vec<f64>,
}

/// Prices a configuration: `counts` = (index into the provider's VM list, instances); `data_bytes` = N·E
/// of the whole data set, sharded over the VMs in proportion to memory; `read_share`/`write_share` feed the
/// paper's GCP IOPS rule.
pub fn quote(
    catalog: &Catalog,
    provider: &Provider,
    counts: &[(usize, u32)],
    data_bytes: f64,
    read_share: f64,
    write_share: f64,
    slas: &[Sla],
) -> Result<Quote, PricingError> {
    let hours = catalog.hours_per_month;
    let instances: u32 = counts.iter().map(|c| c.1).sum();
    let total_mem: f64 = counts
        .iter()
        .map(|&(i, c)| provider.vms[i].memory_bytes as f64 * c as f64)
        .sum();
    let compute: f64 = counts
        .iter()
        .map(|&(i, c)| provider.vms[i].hourly_usd * hours * c as f64)
        .sum();
    let block = provider.block_bytes as f64;
    let mut storage = 0.0;
    let mut iops_per_vm = Vec::with_capacity(counts.len());
    let mut mibps_per_vm = Vec::with_capacity(counts.len());
    if provider.storage_per_vm {
        for &(i, c) in counts {
            let vm = &provider.vms[i];
            let share = data_bytes * vm.memory_bytes as f64 / total_mem;
            let v = volume(provider, share * VOLUME_HEADROOM);
            storage += v.monthly_usd * c as f64;
            iops_per_vm.push(vm.max_disk_iops.map_or(v.iops, |cap| v.iops.min(cap)));
            mibps_per_vm.push(vm.max_disk_mibps.map_or(v.mibps, |cap| v.mibps.min(cap)));
        }
    } else {
        let v = volume(provider, data_bytes);
        storage = v.monthly_usd;
        let iops = match provider.paper_iops {
            Some(PaperIops::Bandwidth { mb_per_s, cap }) => cap.min(mb_per_s * 1e6 / block),
            Some(PaperIops::ReadWriteMix {
                read_mb_per_s,
                write_mb_per_s,
                cap,
            }) => {
                cap.min((read_share * read_mb_per_s + write_share * write_mb_per_s) * 1e6 / block)
            }
            None => v.iops,
        };
        iops_per_vm = vec![iops; counts.len()];
        mibps_per_vm = vec![f64::INFINITY; counts.len()];
    }
    let data_gb = data_bytes / GIB;
    let mut sla = 0.0;
    for s in slas {
        let p = &provider.sla;
        sla += match s {
            Sla::Migration => p.migration_per_gb * data_gb + p.migration_monthly_usd,
            Sla::Backup => p.backup_per_gb_month * data_gb,
            Sla::Support => {
                let spend = compute + storage;
                let mut banded = 0.0;
                let mut lower = 0.0;
                for (upto, rate) in &p.support.bands {
                    let top = upto.unwrap_or(f64::INFINITY);
                    if spend > lower {
                        banded += (spend.min(top) - lower) * rate;
                    }
                    lower = top;
                }
                let per_type: f64 = counts
                    .iter()
                    .map(|&(i, c)| p.support.per_type_usd.get(i).copied().unwrap_or(0.0) * c as f64)
                    .sum();
                banded.max(p.support.monthly_minimum_usd)
                    + p.support.monthly_fixed_usd
                    + p.support.per_instance_usd * instances as f64
                    + per_type
            }
            Sla::Reliability => match p.reliability_per_instance {
                Some(x) => x * instances as f64,
                None => {
                    return Err(PricingError::Unavailable {
                        provider: provider.id.clone(),
                        sla: *s,
                    })
                }
            },
            Sla::Availability => {
                if instances < p.availability_min_instances {
                    return Err(PricingError::TooFewInstances {
                        needed: p.availability_min_instances,
                    });
                }
                0.0
            }
        };
    }
    Ok(Quote {
        compute_usd: compute,
        storage_usd: storage,
        sla_usd: sla,
        total_usd: compute + storage + sla,
        iops_per_vm,
        mibps_per_vm,
    })
}
