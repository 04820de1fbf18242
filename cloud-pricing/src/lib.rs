//! Cosine's cloud price catalog and pricing functions.
//!
//! The catalog is data: `data/cloud-pricing.json` (real published prices with their sources) is embedded at
//! build time; `catalog::load("FILE")` reads a newer one and `catalog::load("paper")` gives the price set the
//! Cosine authors used (MODEL.md §6.3), so the paper's figures and today's prices can be compared side by side.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod catalog;
pub mod pricing;

pub use catalog::{
    load, paper, parse_current, parse_local, Catalog, CatalogError, Provider, SlaPrices, Storage,
    VmType, CLOUD_OS_RESERVE, LOCAL_SCHEMA, NETWORK_SSD_READ_LATENCY_S,
};
pub use pricing::{quote, volume, PricingError, Quote, Sla, VolumeQuote};

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    fn provider<'a>(c: &'a Catalog, id: &str) -> &'a Provider {
        c.providers.iter().find(|p| p.id == id).unwrap()
    }

    #[test]
    fn embedded_catalog_loads_and_validates() {
        let c = load("current").unwrap();
        assert_eq!(c.providers.len(), 3);
        assert_eq!(c.hours_per_month, 730.0);
        for p in &c.providers {
            assert!(p.vms.len() >= 6, "{}", p.id);
        }
        let r5 = provider(&c, "aws")
            .vms
            .iter()
            .find(|v| v.name == "r5.large")
            .unwrap();
        assert_eq!((r5.vcpus, r5.memory_gib(), r5.hourly_usd), (2, 16.0, 0.126));
        // Azure keeps only VMs that take premium SSD
        assert!(
            provider(&c, "azure")
                .vms
                .iter()
                .all(|v| v.name.contains("s_v")),
            "premium-storage sizes only"
        );
    }

    #[test]
    fn bad_entries_are_named() {
        let text = EMBEDDED.replacen("\"hourly_usd\": 0.126", "\"hourly_usd\": -1", 1);
        let err = parse_current(&text).unwrap_err().to_string();
        assert!(
            err.contains("providers.aws.vms[0] (r5.large)") && err.contains("hourly_usd"),
            "{err}"
        );
        assert!(matches!(parse_current("{"), Err(CatalogError::Json(_))));
        assert!(matches!(
            load("/nonexistent.json"),
            Err(CatalogError::Io(..))
        ));
    }

    const EMBEDDED: &str = catalog::EMBEDDED_JSON;

    #[test]
    fn paper_faster_cost_example() {
        // MODEL.md §10.1: 21 × r5d.12xlarge for FASTER on 10^12 × 128 B: $32,976.72 + $11,913.43 = $44,890.15
        let c = paper();
        let aws = provider(&c, "aws");
        let i = aws
            .vms
            .iter()
            .position(|v| v.name == "r5d.12xlarge")
            .unwrap();
        let q = quote(&c, aws, &[(i, 21)], 1e12 * 128.0, 0.5, 0.5, &[]).unwrap();
        assert!(
            (q.compute_usd - 32_976.72).abs() < 0.01,
            "{}",
            q.compute_usd
        );
        assert!(
            (q.storage_usd - 11_913.43).abs() < 0.01,
            "{}",
            q.storage_usd
        );
        assert!((q.total_usd - 44_890.15).abs() < 0.02);
        // RocksDB's minimum: 4 × r5d.12xlarge = $6,281.28 + $11,913.43 = $18,194.71
        let q = quote(&c, aws, &[(i, 4)], 1e12 * 128.0, 0.5, 0.5, &[]).unwrap();
        assert!((q.total_usd - 18_194.71).abs() < 0.02, "{}", q.total_usd);
    }

    #[test]
    fn paper_iops_rules() {
        let c = paper();
        let aws = provider(&c, "aws");
        let q = quote(&c, aws, &[(0, 1)], 1e9, 0.5, 0.5, &[]).unwrap();
        assert!(
            (q.iops_per_vm[0] - 13_351.44).abs() < 0.01,
            "{}",
            q.iops_per_vm[0]
        );
        let gcp = provider(&c, "gcp");
        let q = quote(&c, gcp, &[(0, 1)], 1e9, 0.5, 0.5, &[]).unwrap();
        assert!(
            (q.iops_per_vm[0] - 26_855.47).abs() < 0.01,
            "{}",
            q.iops_per_vm[0]
        );
        // Azure: 119,209 GiB of data is the top slab, 7,500 IOPS at $259.05
        let azure = provider(&c, "azure");
        let q = quote(&c, azure, &[(0, 1)], 119_209.3 * GIB, 0.5, 0.5, &[]).unwrap();
        assert_eq!((q.iops_per_vm[0], q.storage_usd), (7500.0, 259.05));
    }

    #[test]
    fn current_volumes() {
        let c = load("current").unwrap();
        // gp3: 100 GiB, provisioned to 16,000 IOPS (capped at 500/GiB → 16,000) and 1,000 MiB/s
        let v = volume(provider(&c, "aws"), 100.0 * GIB);
        assert_eq!(v.iops, 16_000.0);
        assert!(
            (v.monthly_usd - (100.0 * 0.08 + 13_000.0 * 0.005 + 875.0 * 0.04)).abs() < 1e-9,
            "{}",
            v.monthly_usd
        );
        // pd-ssd: 30 IOPS per GiB
        let v = volume(provider(&c, "gcp"), 100.0 * GIB);
        assert_eq!(v.iops, 3000.0);
        // premium SSD: 100 GiB rounds up to the next priced tier (P10, 128 GiB, $19.71)
        let v = volume(provider(&c, "azure"), 100.0 * GIB);
        assert_eq!((v.size_gib, v.monthly_usd, v.iops), (128.0, 19.71, 500.0));
        // beyond 2 TiB: striped P40s
        let v = volume(provider(&c, "azure"), 5000.0 * GIB);
        assert_eq!((v.size_gib, v.iops), (6144.0, 22_500.0));
    }

    #[test]
    fn sla_add_ons() {
        let c = load("current").unwrap();
        let aws = provider(&c, "aws");
        let base = quote(&c, aws, &[(0, 2)], 100.0 * GIB, 0.5, 0.5, &[]).unwrap();
        let with = quote(
            &c,
            aws,
            &[(0, 2)],
            100.0 * GIB,
            0.5,
            0.5,
            &[Sla::Backup, Sla::Support, Sla::Availability],
        )
        .unwrap();
        // backup $0.05/GB-month on 100 GB, Business support: max($100, 10% of spend)
        let spend = base.compute_usd + base.storage_usd;
        assert!(
            (with.sla_usd - (5.0 + (0.1 * spend).max(100.0))).abs() < 1e-6,
            "{}",
            with.sla_usd
        );
        assert!(matches!(
            quote(&c, aws, &[(0, 1)], 1e9, 0.5, 0.5, &[Sla::Availability]),
            Err(PricingError::TooFewInstances { .. })
        ));
        assert!(matches!(
            quote(&c, aws, &[(0, 1)], 1e9, 0.5, 0.5, &[Sla::Reliability]),
            Err(PricingError::Unavailable { .. })
        ));
        let azure = provider(&c, "azure");
        let q = quote(&c, azure, &[(0, 3)], 1e9, 0.5, 0.5, &[Sla::Reliability]).unwrap();
        assert_eq!(q.sla_usd, 75.0);
        assert_eq!(Sla::parse("devops"), Some(Sla::Support));
    }
}
