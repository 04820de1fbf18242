//! A catalog of one machine of one's own, as `cosine profile` measured it: one provider `local` with one VM
//! `local` (its cores and memory, or its memory cgroup's limit), the disk's IOPS, bandwidth and read latency,
//! the memory its operating system keeps outside the engine, and the engine's own overhead. Its price is a
//! nominal one (the machine is owned): the search over it answers which design, not which VM.

use super::*;
use serde::Deserialize;

/// The `schema` a local machine's catalog file declares.
pub const LOCAL_SCHEMA: &str = "cosine-local-machine/1";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalFile {
    schema: String,
    as_of: String,
    description: String,
    hours_per_month: f64,
    vm: LocalVm,
    volume: LocalVolume,
    os_reserve: Share,
    engine_overhead: Option<Share>,
    /// What else `cosine profile` measured (queue depths, fsync latency, CPU), kept for the reader.
    #[serde(default)]
    #[allow(dead_code)]
    measured: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalVm {
    name: String,
    vcpus: u32,
    memory_bytes: u64,
    hourly_usd: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalVolume {
    name: String,
    iops: f64,
    mibps: f64,
    read_latency_us: f64,
    block_bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Share {
    bytes: f64,
    share: f64,
}

/// Parses a local machine's catalog (the file `cosine profile` writes; its `schema` is [`LOCAL_SCHEMA`]).
pub fn parse_local(text: &str) -> Result<Catalog, CatalogError> {
    let f: LocalFile = serde_json::from_str(text).map_err(|e| CatalogError::Json(e.to_string()))?;
    let bad = |entry: &str, problem: String| CatalogError::Entry {
        entry: entry.into(),
        problem,
    };
    if f.schema != LOCAL_SCHEMA {
        return Err(bad("schema", format!("{} is not {LOCAL_SCHEMA}", f.schema)));
    }
    let positive = |entry: &str, x: f64| {
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(bad(entry, format!("must be a positive number, got {x}")))
        }
    };
    positive("hours_per_month", f.hours_per_month)?;
    positive("vm.hourly_usd", f.vm.hourly_usd)?;
    positive("vm.memory_bytes", f.vm.memory_bytes as f64)?;
    positive("vm.vcpus", f.vm.vcpus as f64)?;
    // a disk without IOPS or bandwidth cannot be priced: one clear error, never an unbounded machine
    positive("volume.iops", f.volume.iops)?;
    positive("volume.mibps", f.volume.mibps)?;
    positive("volume.read_latency_us", f.volume.read_latency_us)?;
    positive("volume.block_bytes", f.volume.block_bytes as f64)?;
    for (entry, s) in [("os_reserve", &f.os_reserve)]
        .into_iter()
        .chain(f.engine_overhead.as_ref().map(|e| ("engine_overhead", e)))
    {
        if !(s.bytes.is_finite()
            && s.bytes >= 0.0
            && s.share.is_finite()
            && (0.0..1.0).contains(&s.share))
        {
            return Err(bad(
                entry,
                format!(
                    "bytes must be >= 0 and share in [0, 1), got {} and {}",
                    s.bytes, s.share
                ),
            ));
        }
    }
    let vm = VmType {
        name: f.vm.name,
        family: "local".into(),
        vcpus: f.vm.vcpus,
        memory_bytes: f.vm.memory_bytes,
        hourly_usd: f.vm.hourly_usd,
        max_disk_iops: None,
        max_disk_mibps: None,
        in_paper_set: false,
    };
    Ok(Catalog {
        name: "local".into(),
        as_of: f.as_of,
        hours_per_month: f.hours_per_month,
        providers: vec![Provider {
            id: "local".into(),
            region: f.description,
            block_bytes: f.volume.block_bytes,
            vms: vec![vm],
            storage: Storage::Fixed {
                name: f.volume.name,
                iops: f.volume.iops,
                mibps: f.volume.mibps,
            },
            storage_per_vm: true,
            paper_iops: None,
            sla: SlaPrices {
                migration_per_gb: 0.0,
                migration_monthly_usd: 0.0,
                backup_per_gb_month: 0.0,
                support: SupportPlan {
                    name: "none".into(),
                    monthly_minimum_usd: 0.0,
                    monthly_fixed_usd: 0.0,
                    bands: Vec::new(),
                    per_instance_usd: 0.0,
                    per_type_usd: Vec::new(),
                },
                reliability_per_instance: None,
                availability_min_instances: 2,
                availability_percent: 0.0,
            },
            read_latency_s: f.volume.read_latency_us * 1e-6,
            os_reserve: (f.os_reserve.bytes, f.os_reserve.share),
            engine_overhead: f.engine_overhead.map(|e| (e.bytes, e.share)),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> serde_json::Value {
        serde_json::json!({
            "schema": LOCAL_SCHEMA,
            "as_of": "2026-12-07",
            "description": "a test machine",
            "hours_per_month": 730.0,
            "vm": {"name": "local", "vcpus": 2, "memory_bytes": 268435456u64, "hourly_usd": 1.0},
            "volume": {"name": "vda", "iops": 9000.0, "mibps": 400.0, "read_latency_us": 180.0, "block_bytes": 4096},
            "os_reserve": {"bytes": 0.0, "share": 0.0},
            "engine_overhead": {"bytes": 20000000.0, "share": 0.05}
        })
    }

    #[test]
    fn a_profiled_machine_loads_as_one_provider_with_one_vm() {
        let c = parse_local(&sample().to_string()).unwrap();
        let p = &c.providers[0];
        assert_eq!(
            (p.id.as_str(), p.vms.len(), p.vms[0].vcpus),
            ("local", 1, 2)
        );
        assert!((p.read_latency_s - 180e-6).abs() < 1e-12);
        assert_eq!(p.engine_overhead, Some((20e6, 0.05)));
        let v = crate::volume(p, 1e12);
        assert_eq!((v.iops, v.mibps, v.monthly_usd), (9000.0, 400.0, 0.0));
    }

    #[test]
    fn a_disk_without_iops_or_bandwidth_is_one_clear_error() {
        for (field, value) in [("iops", 0.0), ("mibps", -1.0), ("read_latency_us", 0.0)] {
            let mut v = sample();
            v["volume"][field] = serde_json::json!(value);
            let e = parse_local(&v.to_string()).unwrap_err().to_string();
            assert!(e.contains(&format!("volume.{field}")), "{e}");
        }
        let mut v = sample();
        v["volume"].as_object_mut().unwrap().remove("iops");
        assert!(parse_local(&v.to_string()).is_err());
        let mut v = sample();
        v["schema"] = serde_json::json!("something/2");
        assert!(parse_local(&v.to_string())
            .unwrap_err()
            .to_string()
            .contains("schema"));
    }
}
