//! Every configuration the search returns is one a machine can run: its VMs' request rate within their
//! volumes' IOPS, their byte rate within the volumes' bandwidth, each design's memory within the VM's less its
//! reserve, each write buffer recovering within the bound. Over random workloads, scales and budgets.

use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::named_workload;
use cosine_search::continuum::{search, Config, SearchOptions};
use proptest::prelude::*;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Checks one configuration of a search over `entries` entries and `operations` operations.
fn runs_within_its_machines(c: &Config, entries: f64, operations: f64, opts: &SearchOptions) {
    for p in &c.parts {
        let d = &p.design;
        let delivered = d
            .delivered
            .expect("the physical model says what each VM delivers");
        // the operations this VM's shard runs in the configuration's time, and what they ask of its volume
        let ops = operations * p.entries_per_vm as f64 / entries;
        let rate = ops / c.latency_s;
        assert!(
            rate <= delivered.ops_per_s * (1.0 + 1e-6),
            "{}: {rate} > {}",
            c.describe(),
            delivered.ops_per_s
        );
        let requests = rate * d.requests.requests();
        let bytes = rate * d.requests.bytes();
        assert!(
            requests <= p.iops * (1.0 + 1e-6),
            "{}: {requests} requests/s on {} IOPS",
            c.describe(),
            p.iops
        );
        assert!(
            bytes <= p.mibps * 1024.0 * 1024.0 * (1.0 + 1e-6),
            "{}: {bytes} B/s on {} MiB/s",
            c.describe(),
            p.mibps
        );
        assert!(delivered.iops_used <= 1.0 && delivered.bandwidth_used <= 1.0);
        let memory = d.design.memory_bytes() as f64;
        assert!(
            memory <= (p.memory_gib - p.reserved_gib) * GIB + 1.0 && p.reserved_gib > 0.0,
            "{}: a design of {memory} B on {} GiB less {} GiB",
            c.describe(),
            p.memory_gib,
            p.reserved_gib
        );
        assert!(
            d.recovery_s <= opts.max_recovery_s * (1.0 + 1e-9),
            "{}: recovers in {} s",
            c.describe(),
            d.recovery_s
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    #[test]
    fn every_configuration_the_search_returns_fits_its_machines(
        which in 0usize..6,
        scale in 7u32..10,
        budget in prop::sample::select(vec![2_000.0, 5_000.0, 20_000.0]),
        provider in prop::sample::select(vec!["aws", "gcp", "azure"]),
        recovery in prop::sample::select(vec![10.0, 60.0]),
    ) {
        let catalog = cosine_cloud_pricing::load("current").unwrap();
        let name = ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"][which];
        let mut w = named_workload(name).unwrap();
        w.entries = 10u64.pow(scale);
        let mut opts = SearchOptions::new(budget);
        opts.providers = vec![provider.into()];
        opts.max_vms = 4;
        opts.max_recovery_s = recovery;
        let r = search(&catalog, &w, &PhiLibrary::default(), &opts);
        let (entries, operations) = (w.entries as f64, w.operations as f64);
        for c in r.frontier.iter().chain(r.baselines.iter().flat_map(|(_, f)| f)) {
            runs_within_its_machines(c, entries, operations, &opts);
        }
        prop_assert!(!r.frontier.is_empty());
    }
}
