//! Today's prices: the catalog JSON (the shared data file, with a source for every figure) parsed into
//! providers, VM types, the volume each VM's shard lives on and SLA add-ons.

use super::*;
use serde_json::Value;

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
        // Azure states MB/s; AWS an instance's EBS bandwidth in megabits a second (for the smaller sizes the
        // "up to" figure, a burst: generous)
        max_disk_mibps: match c.opt("max_uncached_disk_mbps")? {
            Some(mbps) => Some(mbps),
            None => c
                .opt("ebs_bandwidth_mbps")?
                .map(|megabits| megabits * 1e6 / 8.0 / (1024.0 * 1024.0)),
        },
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
            read_latency_s: NETWORK_SSD_READ_LATENCY_S,
            os_reserve: CLOUD_OS_RESERVE,
            engine_overhead: None,
        });
    }
    Ok(Catalog {
        name: "current".into(),
        as_of: r.str("as_of").unwrap_or_default(),
        hours_per_month: hours,
        providers: out,
    })
}
