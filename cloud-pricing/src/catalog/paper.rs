//! The price set the Cosine authors used, as their code has it (MODEL.md §6.3).

use super::*;

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
                read_latency_s: NETWORK_SSD_READ_LATENCY_S,
                os_reserve: CLOUD_OS_RESERVE,
                engine_overhead: None,
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
                read_latency_s: NETWORK_SSD_READ_LATENCY_S,
                os_reserve: CLOUD_OS_RESERVE,
                engine_overhead: None,
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
                read_latency_s: NETWORK_SSD_READ_LATENCY_S,
                os_reserve: CLOUD_OS_RESERVE,
                engine_overhead: None,
            },
        ],
    }
}
