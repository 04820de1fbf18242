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
}

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

struct Ctx<'a> {
    entry: String,
    v: &'a Value,
}

impl<'a> Ctx<'a> {
    fn err(&self, problem: impl Into<String>) -> CatalogError {
        CatalogError::Entry {
            entry: self.entry.clone(),
            problem: problem.into(),
        }
    }
    fn num(&self, key: &str) -> Result<f64, CatalogError> {
        match self.v.get(key).and_then(Value::as_f64) {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
            Some(x) => Err(self.err(format!("{key} must be a non-negative number, got {x}"))),
            None => Err(self.err(format!("missing number {key}"))),
        }
    }
    fn opt(&self, key: &str) -> Result<Option<f64>, CatalogError> {
        match self.v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.num(key).map(Some),
        }
    }
    fn str(&self, key: &str) -> Result<String, CatalogError> {
        self.v
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| self.err(format!("missing string {key}")))
    }
    fn child(&self, key: &str) -> Result<Ctx<'a>, CatalogError> {
        let v = self
            .v
            .get(key)
            .ok_or_else(|| self.err(format!("missing {key}")))?;
        Ok(Ctx {
            entry: format!("{}.{key}", self.entry),
            v,
        })
    }
    fn array(&self, key: &str) -> Result<Vec<Ctx<'a>>, CatalogError> {
        let arr = self
            .v
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(format!("missing list {key}")))?;
        Ok(arr
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let name = v
                    .get("name")
                    .or_else(|| v.get("tier"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                Ctx {
                    entry: format!("{}.{key}[{i}] ({name})", self.entry),
                    v,
                }
            })
            .collect())
    }
    fn find(&self, key: &str, name: &str) -> Result<Ctx<'a>, CatalogError> {
        self.array(key)?
            .into_iter()
            .find(|c| c.v.get("name").and_then(Value::as_str) == Some(name))
            .ok_or_else(|| self.err(format!("no {key} entry named {name}")))
    }
}

fn vm(c: &Ctx<'_>) -> Result<VmType, CatalogError> {
    let vcpus = c.num("vcpus")?;
    if vcpus < 1.0 || vcpus.fract() != 0.0 {
        return Err(c.err(format!("vcpus must be a positive integer, got {vcpus}")));
    }
    let mem = c.num("memory_gib")?;
    let hourly = c.num("hourly_usd")?;
    if mem <= 0.0 || hourly <= 0.0 {
        return Err(c.err("memory_gib and hourly_usd must be positive"));
    }
    Ok(VmType {
        name: c.str("name")?,
        family: c.str("family").unwrap_or_default(),
        vcpus: vcpus as u32,
        memory_bytes: (mem * GIB) as u64,
        hourly_usd: hourly,
        max_disk_iops: c.opt("max_uncached_disk_iops")?,
        max_disk_mibps: c.opt("max_uncached_disk_mbps")?,
        in_paper_set: c
            .v
            .get("in_paper_set")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn bands(c: &Ctx<'_>) -> Result<Vec<(Option<f64>, f64)>, CatalogError> {
    let mut out = Vec::new();
    if let Some(arr) =
        c.v.get("percent_of_monthly_usage")
            .and_then(Value::as_array)
    {
        for (i, b) in arr.iter().enumerate() {
            let bc = Ctx {
                entry: format!("{}.percent_of_monthly_usage[{i}]", c.entry),
                v: b,
            };
            out.push((bc.opt("up_to_usd")?, bc.num("rate")?));
        }
    }
    Ok(out)
}

fn support(c: &Ctx<'_>) -> Result<SupportPlan, CatalogError> {
    Ok(SupportPlan {
        name: c.str("name")?,
        monthly_minimum_usd: c.opt("monthly_minimum_usd")?.unwrap_or(0.0),
        monthly_fixed_usd: c.opt("monthly_fixed_usd")?.unwrap_or(0.0),
        bands: bands(c)?,
        per_instance_usd: 0.0,
        per_type_usd: Vec::new(),
    })
}

/// Parses the catalog JSON into today's prices: per provider its VM types (Azure: those that take premium SSD),
/// the SSD volume each VM's shard lives on (AWS gp3 provisioned to its maximum, GCP pd-ssd, Azure premium SSD
/// tiers), and SLA add-ons (AWS Business support, GCP Enhanced support, Azure Standard support; snapshots for
/// backup; the migration services; Azure Site Recovery for reliability; multi-zone instances for availability).
pub fn parse_current(text: &str) -> Result<Catalog, CatalogError> {
    let root: Value = serde_json::from_str(text).map_err(|e| CatalogError::Json(e.to_string()))?;
    let r = Ctx {
        entry: "catalog".into(),
        v: &root,
    };
    let hours = r.num("hours_per_month")?;
    if hours <= 0.0 {
        return Err(r.err("hours_per_month must be positive"));
    }
    let providers = r.child("providers")?;
    let mut out = Vec::new();
    for id in ["aws", "gcp", "azure"] {
        let p = providers.child(id)?;
        let mut vms = Vec::new();
        for c in p.array("vms")? {
            let v = vm(&c)?;
            if id == "azure"
                && !c
                    .v
                    .get("premium_storage")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            {
                continue;
            }
            vms.push(v);
        }
        if vms.is_empty() {
            return Err(p.err("no usable VM types"));
        }
        let sla_c = p.child("sla_addons")?;
        let (storage, sla) = match id {
            "aws" => {
                let g = p.find("block_storage", "gp3")?;
                let rule = g.child("iops_rule")?;
                let storage = Storage::PerGb {
                    name: "gp3".into(),
                    price_per_gb_month: g.num("price_per_gb_month")?,
                    free_gb: 0.0,
                    baseline_iops: rule.num("baseline_iops")?,
                    iops_per_gib: rule.num("max_iops_per_gib")?,
                    max_iops: rule.num("max_iops")?,
                    price_per_iops_month: g
                        .num("price_per_provisioned_iops_month_above_baseline")?,
                    baseline_mibps: rule.num("baseline_mibps")?,
                    mibps_per_gib: rule.num("max_iops_per_gib")?
                        * rule.num("mibps_per_provisioned_iops")?,
                    max_mibps: rule.num("max_mibps")?,
                    price_per_mibps_month: g
                        .num("price_per_provisioned_mibps_month_above_baseline")?,
                };
                let dms = sla_c.find(
                    "db_migration",
                    "AWS DMS replication instance dms.t2.micro (single-AZ)",
                )?;
                let sla = SlaPrices {
                    migration_per_gb: 0.0,
                    migration_monthly_usd: dms.num("hourly_usd")? * hours,
                    backup_per_gb_month: sla_c
                        .find("backup", "EBS snapshot (standard tier)")?
                        .num("price_per_gb_month")?,
                    support: support(&sla_c.find("support_plans", "Business")?)?,
                    reliability_per_instance: None,
                    availability_min_instances: 2,
                    availability_percent: 99.99,
                };
                (storage, sla)
            }
            "gcp" => {
                let g = p.find("block_storage", "pd-ssd")?;
                let rule = g.child("iops_rule")?;
                let storage = Storage::PerGb {
                    name: "pd-ssd".into(),
                    price_per_gb_month: g.num("price_per_gb_month")?,
                    free_gb: 0.0,
                    baseline_iops: 0.0,
                    iops_per_gib: rule.num("read_iops_per_gib")?,
                    max_iops: rule.num("max_read_iops_per_instance")?,
                    price_per_iops_month: 0.0,
                    baseline_mibps: 0.0,
                    mibps_per_gib: rule.num("mibps_per_gib")?,
                    max_mibps: rule.num("max_throughput_mibps_per_instance")?,
                    price_per_mibps_month: 0.0,
                };
                let sla = SlaPrices {
                    migration_per_gb: 0.0,
                    migration_monthly_usd: sla_c
                        .array("db_migration")?
                        .first()
                        .map(|c| c.opt("monthly_usd"))
                        .transpose()?
                        .flatten()
                        .unwrap_or(0.0),
                    backup_per_gb_month: sla_c
                        .find("backup", "PD snapshot (regional)")?
                        .num("price_per_gb_month")?,
                    support: support(&sla_c.find("support_plans", "Enhanced (from 2024-11-01)")?)?,
                    reliability_per_instance: None,
                    availability_min_instances: 2,
                    availability_percent: 99.99,
                };
                (storage, sla)
            }
            _ => {
                let d = p.find("block_storage", "premium-ssd-lrs")?;
                let mut slabs = Vec::new();
                for s in d.array("slabs")? {
                    if let Some(price) = s.opt("monthly_usd")? {
                        slabs.push(Slab {
                            tier: s.str("tier")?,
                            size_gib: s.num("size_gib")?,
                            iops: s.num("iops")?,
                            mibps: s.num("throughput_mbps")?,
                            monthly_usd: price,
                        });
                    }
                }
                if slabs.is_empty() {
                    return Err(d.err("no priced tiers"));
                }
                slabs.sort_by(|a, b| a.size_gib.total_cmp(&b.size_gib));
                let asr = sla_c.find("reliability", "Azure Site Recovery, Azure-to-Azure")?;
                let sla = SlaPrices {
                    migration_per_gb: 0.0,
                    migration_monthly_usd: 0.0,
                    backup_per_gb_month: sla_c
                        .find("backup", "Azure Backup storage GRS")?
                        .num("price_per_gb_month")?,
                    support: support(&sla_c.find("support_plans", "Standard")?)?,
                    reliability_per_instance: Some(asr.num("monthly_usd_per_instance")?),
                    availability_min_instances: 2,
                    availability_percent: 99.99,
                };
                (
                    Storage::Slabs {
                        name: "premium-ssd-lrs".into(),
                        slabs,
                    },
                    sla,
                )
            }
        };
        out.push(Provider {
            id: id.into(),
            region: p.str("region")?,
            block_bytes: CURRENT_BLOCK_BYTES,
            vms,
            storage,
            storage_per_vm: true,
            paper_iops: None,
            sla,
        });
    }
    Ok(Catalog {
        name: "current".into(),
        as_of: r.str("as_of").unwrap_or_default(),
        hours_per_month: hours,
        providers: out,
    })
}

/// The price set the Cosine authors used (MODEL.md §6.3): six AWS r5d, seven GCP n1-highmem (1-year commit
/// prices) and seven Azure E v3 sizes; storage priced once for all the data (AWS $0.1/GB beyond 75 GB, GCP
/// $0.17/GB, Azure flat slabs); the code's IOPS rules; 720-hour months; the code's SLA prices.
pub fn paper() -> Catalog {
    let vm = |name: &str, family: &str, gib: f64, usd: f64, vcpus: u32| VmType {
        name: name.into(),
        family: family.into(),
        vcpus,
        memory_bytes: (gib * GIB) as u64,
        hourly_usd: usd,
        max_disk_iops: None,
        max_disk_mibps: None,
        in_paper_set: true,
    };
    let aws_vms = [
        ("large", 16.0, 0.091, 2),
        ("xlarge", 32.0, 0.182, 4),
        ("2xlarge", 64.0, 0.364, 8),
        ("4xlarge", 128.0, 0.727, 16),
        ("12xlarge", 384.0, 2.181, 48),
        ("24xlarge", 768.0, 4.362, 96),
    ]
    .iter()
    .map(|(n, g, p, c)| vm(&format!("r5d.{n}"), "r5d", *g, *p, *c))
    .collect();
    let gcp_vms = [
        (2, 13.0, 0.0745),
        (4, 26.0, 0.1491),
        (8, 52.0, 0.2981),
        (16, 104.0, 0.5962),
        (32, 208.0, 1.1924),
        (64, 416.0, 2.3849),
        (96, 624.0, 3.5773),
    ]
    .iter()
    .map(|(c, g, p)| vm(&format!("n1-highmem-{c}"), "n1-highmem", *g, *p, *c))
    .collect();
    let azure_vms = [
        (2, 16.0, 0.0782),
        (4, 32.0, 0.1564),
        (8, 64.0, 0.3128),
        (16, 128.0, 0.6256),
        (20, 160.0, 0.7409),
        (32, 256.0, 1.2512),
        (64, 512.0, 2.5024),
    ]
    .iter()
    .map(|(c, g, p)| vm(&format!("E{c}_v3"), "Ev3", *g, *p, *c))
    .collect();
    let per_gb = |price: f64, free: f64| Storage::PerGb {
        name: "paper".into(),
        price_per_gb_month: price,
        free_gb: free,
        baseline_iops: f64::INFINITY,
        iops_per_gib: 0.0,
        max_iops: f64::INFINITY,
        price_per_iops_month: 0.0,
        baseline_mibps: f64::INFINITY,
        mibps_per_gib: 0.0,
        max_mibps: f64::INFINITY,
        price_per_mibps_month: 0.0,
    };
    let slabs = [
        (32.0, 120.0, 5.28),
        (64.0, 240.0, 10.21),
        (128.0, 500.0, 19.71),
        (256.0, 1100.0, 38.02),
        (512.0, 2300.0, 73.22),
        (2000.0, 5000.0, 135.17),
        (f64::INFINITY, 7500.0, 259.05),
    ]
    .iter()
    .enumerate()
    .map(|(i, (g, iops, usd))| Slab {
        tier: format!("slab{i}"),
        size_gib: *g,
        iops: *iops,
        mibps: f64::INFINITY,
        monthly_usd: *usd,
    })
    .collect();
    let plan = |per_instance: f64, fixed: f64, per_type: Vec<f64>| SupportPlan {
        name: "devops (paper)".into(),
        monthly_minimum_usd: 0.0,
        monthly_fixed_usd: fixed,
        bands: Vec::new(),
        per_instance_usd: per_instance,
        per_type_usd: per_type,
    };
    let sla = |migration: f64, backup: f64, support: SupportPlan| SlaPrices {
        migration_per_gb: migration,
        migration_monthly_usd: 0.0,
        backup_per_gb_month: backup,
        support,
        reliability_per_instance: Some(0.0),
        availability_min_instances: 1,
        availability_percent: 99.9,
    };
    let gcp_devops = vec![0.1184, 0.2368, 0.4736, 0.9472, 1.8944, 3.7888, 5.6832];
    Catalog {
        name: "paper".into(),
        as_of: "2021 (Cosine, PVLDB 15(1); the authors' code)".into(),
        hours_per_month: 720.0,
        providers: vec![
            Provider {
                id: "aws".into(),
                region: "paper".into(),
                block_bytes: 256 * 1024,
                vms: aws_vms,
                storage: per_gb(0.1, 75.0),
                storage_per_vm: false,
                paper_iops: Some(PaperIops::Bandwidth {
                    mb_per_s: 3500.0,
                    cap: 15000.0,
                }),
                sla: sla(0.115, 0.05, plan(0.02, 0.0, Vec::new())),
            },
            Provider {
                id: "gcp".into(),
                region: "paper".into(),
                block_bytes: 16 * 1024,
                vms: gcp_vms,
                storage: per_gb(0.17, 0.0),
                storage_per_vm: false,
                paper_iops: Some(PaperIops::ReadWriteMix {
                    read_mb_per_s: 720.0,
                    write_mb_per_s: 160.0,
                    cap: 30000.0,
                }),
                sla: sla(0.17, 0.17, plan(0.0, 0.0, gcp_devops)),
            },
            Provider {
                id: "azure".into(),
                region: "paper".into(),
                block_bytes: 8 * 1024,
                vms: azure_vms,
                storage: Storage::Slabs {
                    name: "paper slabs".into(),
                    slabs,
                },
                storage_per_vm: false,
                paper_iops: None,
                sla: sla(0.17, 0.0448, plan(0.0, 6.0, Vec::new())),
            },
        ],
    }
}

/// The catalog by name: "current" (the embedded file), "paper", or a path to a newer catalog file.
pub fn load(spec: &str) -> Result<Catalog, CatalogError> {
    match spec {
        "current" | "" => parse_current(EMBEDDED_JSON),
        "paper" => Ok(paper()),
        path => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CatalogError::Io(path.into(), e.to_string()))?;
            parse_current(&text)
        }
    }
}
