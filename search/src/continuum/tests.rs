use super::*;
use cosine_cost_model::machine::ThroughputModel;
use cosine_design::named_workload;

#[test]
fn noise_spreads_ten_percent() {
    let m = OperationMix {
        lookup: 0.5,
        blind_update: 0.5,
        ..Default::default()
    };
    let n = noisy_mix(&m, 0.1);
    assert!((n.lookup - 0.45).abs() < 1e-12 && (n.scan - 0.025).abs() < 1e-12);
    n.validate().unwrap();
    let full = OperationMix {
        lookup: 0.5,
        empty_lookup: 0.1,
        insert: 0.1,
        blind_update: 0.1,
        rmw: 0.1,
        scan: 0.1,
    };
    let n = noisy_mix(&full, 0.1);
    assert!((n.lookup - 0.45).abs() < 1e-12 && (n.scan - 0.11).abs() < 1e-12);
}

/// YCSB-A over 100 M entries on the paper's AWS catalog, at most 8 VMs, a $5,000 budget: a search that
/// runs in a test's time.
fn small_ycsb_a() -> (Catalog, Workload, SearchOptions) {
    let mut w = named_workload("ycsb-a").unwrap();
    w.entries = 100_000_000;
    let mut opts = SearchOptions::new(5_000.0);
    opts.providers = vec!["aws".into()];
    opts.max_vms = 8;
    (cosine_cloud_pricing::paper(), w, opts)
}

#[test]
fn frontier_is_monotone_and_best_within_budget() {
    let (catalog, w, opts) = small_ycsb_a();
    let r = search(&catalog, &w, &PhiLibrary::default(), &opts);
    assert!(!r.frontier.is_empty());
    for pair in r.frontier.windows(2) {
        assert!(pair[0].monthly_usd() < pair[1].monthly_usd());
        assert!(
            pair[0].latency_s > pair[1].latency_s,
            "more money never buys less"
        );
    }
    let best = r.best.unwrap();
    assert!(best.monthly_usd() <= 5_000.0);
    for c in &r.frontier {
        if c.monthly_usd() <= 5_000.0 {
            assert!(c.latency_s >= best.latency_s);
        }
    }
    for p in &best.parts {
        p.design.design.validate().unwrap();
        assert!(
            p.design.design.memory_bytes() as f64 <= p.memory_gib * 1024.0 * 1024.0 * 1024.0 + 1.0
        );
    }
}

#[test]
fn a_fixed_system_priced_again_at_another_phi_runs_as_throughput_at_phi_says() {
    let (catalog, w, opts) = small_ycsb_a();
    let phi = PhiLibrary::default();
    let r = search(&catalog, &w, &phi, &opts);
    let mut checked = 0;
    for (system, frontier) in &r.baselines {
        let Some(c) = best_within(frontier, 5_000.0) else {
            continue;
        };
        let own = c.parts[0].design.phi;
        // at its own φ, its own throughput; more φ, never slower
        let same = c.throughput_at_phi(own);
        assert!(
            (same - c.throughput).abs() <= 1e-9 * c.throughput,
            "{same} {}",
            c.throughput
        );
        assert!(c.throughput_at_phi((own + 0.05).min(1.0)) >= c.throughput);
        // price the system again with every operation's φ set to `other`: the same VMs now run at what
        // throughput_at_phi said, and the best within the budget is at least that fast
        let other = if own > 0.5 { own - 0.4 } else { own + 0.4 };
        let mut lib = phi.clone();
        lib.entries.insert(
            system.phi_key().to_string(),
            cosine_cost_model::cpu::PhiEntry::from_ops([other; 5]),
        );
        let again = search(&catalog, &w, &lib, &opts);
        let (_, f) = again.baselines.iter().find(|(b, _)| b == system).unwrap();
        let predicted = c.throughput_at_phi(other);
        let twin = f
            .iter()
            .find(|x| x.provider == c.provider && x.describe() == c.describe());
        if let Some(t) = twin {
            assert!(
                (t.throughput - predicted).abs() <= 1e-6 * predicted,
                "{}: {} priced again, {predicted} predicted",
                system.name(),
                t.throughput
            );
            checked += 1;
        }
        let best = best_within(f, 5_000.0).unwrap();
        assert!(
            best.throughput >= predicted * (1.0 - 1e-9),
            "{}",
            system.name()
        );
    }
    assert!(
        checked > 0,
        "no fixed system kept its configuration on the frontier"
    );
}

#[test]
fn the_slowest_vm_type_sets_a_mixed_configuration_at_another_phi_and_the_split_multiplies_out() {
    for model in [ThroughputModel::Paper, ThroughputModel::Physical] {
        slowest_vm_type_at_another_phi(model);
    }
}

fn slowest_vm_type_at_another_phi(model: ThroughputModel) {
    let (catalog, w, mut opts) = small_ycsb_a();
    opts.throughput = model;
    let r = search(&catalog, &w, &PhiLibrary::default(), &opts);
    let one = r.best.unwrap();
    // a second VM type, eight times the vCPUs, at 99% of the first one's latency: at its own φ the first
    // VM type is the slowest; at φ = 0 the second, which loses more of its speedup, is
    let mut mixed = one.clone();
    let mut second = one.parts[0].clone();
    second.vcpus *= 8;
    second.design.latency_s *= 0.99;
    mixed.parts.push(second);
    let mut second_slowest = false;
    let g = |phi: f64, eta: u32| cosine_cost_model::cpu::speedup(phi, eta as f64);
    let own = one.parts[0].design.phi;
    // the paper's Eq. 3 divides a VM's whole time by g; the physical model prices its limits again, φ moving
    // the cores' alone
    let at = |p: &Part, phi: f64| match &p.design.delivered {
        None => p.design.latency_s * g(own, p.vcpus) / g(phi, p.vcpus),
        Some(now) => {
            let then = cosine_cost_model::machine::delivered(
                &p.design.requests,
                p.design.cpu_s,
                phi,
                &p.machine(),
            );
            p.design.latency_s * now.ops_per_s / then.ops_per_s
        }
    };
    assert_eq!(
        one.parts[0].design.delivered.is_some(),
        model == ThroughputModel::Physical
    );
    assert!(one.parts.iter().all(|p| p.design.phi == own));
    for phi in [0.0, 0.3, own, 0.95] {
        let first = one.parts.iter().map(|p| at(p, phi)).fold(0.0, f64::max);
        let other = at(mixed.parts.last().unwrap(), phi);
        second_slowest |= other > first;
        let want = mixed.throughput * mixed.latency_s / first.max(other);
        let got = mixed.throughput_at_phi(phi);
        assert!((got - want).abs() <= 1e-9 * want, "φ {phi}: {got} {want}");
    }
    if model == ThroughputModel::Paper {
        // (under the physical model φ moves only a CPU-bound VM; this one is bound by its volume)
        assert!(
            second_slowest,
            "the second VM type never set the latency (φ {own})"
        );
        assert!(mixed.throughput_at_phi(0.0) < one.throughput_at_phi(0.0));
    }
    // the split multiplies out, and is the identity against itself
    for (_, f) in &r.baselines {
        if let Some(theirs) = best_within(f, 5_000.0) {
            let m = margin_split(&one, theirs).unwrap();
            assert!((m.phi * m.rest - m.total).abs() <= 1e-9 * m.total);
            assert!((m.total - one.throughput / theirs.throughput).abs() <= 1e-12 * m.total);
        }
    }
    let same = margin_split(&one, &one).unwrap();
    assert!((same.phi - 1.0).abs() < 1e-12 && (same.rest - 1.0).abs() < 1e-12);
    // two VM types running designs of different φ: no one φ to exchange
    mixed.parts[1].design.phi = own / 2.0;
    assert!(margin_split(&mixed, &one).is_none());
}

#[test]
fn more_budget_never_gives_a_slower_best() {
    let catalog = cosine_cloud_pricing::load("current").unwrap();
    let mut w = named_workload("ycsb-b").unwrap();
    w.entries = 1_000_000_000;
    let mut opts = SearchOptions::new(10_000.0);
    opts.providers = vec!["azure".into()];
    opts.max_vms = 6;
    let r = search(&catalog, &w, &PhiLibrary::default(), &opts);
    let mut last = 0.0;
    for b in [200.0, 500.0, 1_000.0, 2_000.0, 5_000.0, 10_000.0, 50_000.0] {
        if let Some(c) = best_within(&r.frontier, b) {
            assert!(c.monthly_usd() <= b);
            assert!(c.throughput >= last, "budget {b}");
            last = c.throughput;
        }
    }
    assert!(last > 0.0);
}

fn classes(w: &Workload, budget: f64) -> Vec<(cosine_design::DesignClass, u64)> {
    let catalog = cosine_cloud_pricing::load("current").unwrap();
    let mut opts = SearchOptions::new(budget);
    opts.providers = vec!["aws".into()];
    opts.max_vms = 4;
    // enough requests in flight to reach a volume's IOPS: at one a vCPU, a small VM is bound by its lookups'
    // latency, whatever its writes cost, and the shape is then chosen by the reads alone
    opts.in_flight = Some(16.0);
    let r = search(&catalog, w, &PhiLibrary::default(), &opts);
    r.best
        .unwrap()
        .parts
        .iter()
        .map(|p| (p.design.class, p.design.design.hot_runs))
        .collect()
}

#[test]
fn write_heavy_on_little_money_is_write_optimised() {
    let mut w = Workload::with_mix(OperationMix {
        insert: 0.9,
        lookup: 0.1,
        ..Default::default()
    });
    w.entries = 2_000_000_000;
    for (class, k) in classes(&w, 1_000.0) {
        assert!(
            k > 1 || class == cosine_design::DesignClass::Lsh,
            "{class:?} with K = {k}"
        );
    }
}

#[test]
fn range_heavy_lands_on_one_run_per_level() {
    let mut w = Workload::with_mix(OperationMix {
        scan: 0.9,
        lookup: 0.05,
        insert: 0.05,
        ..Default::default()
    });
    w.entries = 2_000_000_000;
    w.scan_length = 2_000;
    // every seek pays once per run, so long scans want one run per level: B-tree-like or leveled
    // (with the fences of the fixed model's cold levels on disk costing an extra block per seek, a
    // leveled tree with fences in memory is often the cheaper of the two)
    for (class, k) in classes(&w, 1_000.0) {
        assert!(
            k == 1
                && matches!(
                    class,
                    cosine_design::DesignClass::Btree | cosine_design::DesignClass::Lsm
                ),
            "{class:?} with K = {k}"
        );
    }
}

#[test]
fn dominated_vm_types_are_dropped() {
    let c = cosine_cloud_pricing::load("current").unwrap();
    let aws = c.providers.iter().find(|p| p.id == "aws").unwrap();
    let keep = undominated(aws);
    let names: Vec<&str> = keep.iter().map(|&i| aws.vms[i].name.as_str()).collect();
    // r5d costs more than r5 for the same memory and cores (local NVMe is not modelled)
    assert!(
        !names.contains(&"r5d.large") && names.contains(&"r5.large"),
        "{names:?}"
    );
}

#[test]
fn a_margin_across_phi_s_evidence_holds_the_margin_at_the_kept_phi() {
    let (catalog, w, mut opts) = small_ycsb_a();
    for model in [ThroughputModel::Paper, ThroughputModel::Physical] {
        opts.throughput = model;
        let r = search(&catalog, &w, &PhiLibrary::default(), &opts);
        let ours = r.best.unwrap();
        let around = |phi: f64| ((phi - 0.2).max(0.0), (phi + 0.2).min(1.0));
        for (_, f) in &r.baselines {
            let Some(theirs) = best_within(f, 5_000.0) else {
                continue;
            };
            let m = margin_range(
                &ours,
                around(ours.parts[0].design.phi),
                theirs,
                around(theirs.parts[0].design.phi),
            );
            let kept = ours.throughput / theirs.throughput;
            assert!(
                m.low <= kept * (1.0 + 1e-12) && kept <= m.high * (1.0 + 1e-12),
                "{model:?}: {} <= {kept} <= {}",
                m.low,
                m.high
            );
            // no spread: the margin itself
            let none = margin_range(
                &ours,
                (ours.parts[0].design.phi, ours.parts[0].design.phi),
                theirs,
                (theirs.parts[0].design.phi, theirs.parts[0].design.phi),
            );
            assert!(
                (none.low - kept).abs() <= 1e-9 * kept && (none.high - kept).abs() <= 1e-9 * kept
            );
        }
    }
}
