//! `cosine search`: the main job. The search's inputs and its JSON answer are `search_args`'s (shared with
//! `cosine compare` and the explorer); this module writes the files the flags ask for and prints the answer.

use crate::describe::{self, describe_mix};
use crate::search_args::{
    margin_across_phi, prepare, run_with_progress, search_json, speedup, target_answer, Prepared,
    SearchArgs,
};
use anyhow::{anyhow, Context, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_cost_model::machine::ThroughputModel;
use cosine_search::continuum::{Config, MarginRange, SearchResult};

/// Runs `cosine search`.
pub fn run(a: SearchArgs) -> Result<()> {
    let p = prepare(&a, None)?;
    let t = std::time::Instant::now();
    let r = run_with_progress(&p.catalog, &p.workload, &p.phi, p.opts.clone())?;
    let elapsed = t.elapsed().as_secs_f64();
    let target = target_answer(&r, a.latency_target, a.throughput_target, a.budget);
    write_files(&a, &r, &p.workload)?;
    // written before the answer is printed, refused (exit 2) after it: a refusal does not hide the answer
    let rocksdb = match &a.rocksdb_options_out {
        Some(path) => write_rocksdb_options(path, &r, &p.workload),
        None => Ok(()),
    };
    if a.json {
        let v = search_json(&a, &p, &r, elapsed);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return rocksdb;
    }
    print_header(&a, &p);
    print_answer(&r, a.budget, &p.workload);
    print_fixed_designs(&r, &p);
    print_phi_sources(&r, &p.phi);
    print_target(target, &p.workload);
    print_written(&a);
    print_counts(&r, elapsed);
    rocksdb
}

/// `--design-out`, `--deployment-out` and `--plot`: the best configuration's design and deployment, and the
/// frontier drawn.
fn write_files(a: &SearchArgs, r: &SearchResult, workload: &cosine_design::Workload) -> Result<()> {
    if let Some(path) = &a.design_out {
        let best = r
            .best
            .as_ref()
            .ok_or_else(|| anyhow!("no configuration fits the budget: no design to write"))?;
        std::fs::write(path, best.parts[0].design.design.to_json() + "\n")
            .with_context(|| format!("writing {path}"))?;
    }
    if let Some(path) = &a.deployment_out {
        let best = r
            .best
            .as_ref()
            .ok_or_else(|| anyhow!("no configuration fits the budget: no deployment to write"))?;
        let d = deployment_of(best);
        std::fs::write(path, serde_json::to_string_pretty(&d)? + "\n")
            .with_context(|| format!("writing {path}"))?;
    }
    if let Some(path) = &a.plot {
        let title = format!(
            "{}: throughput per monthly cost",
            workload.name.clone().unwrap_or_else(|| a.workload.clone())
        );
        crate::plot::write_svg(path, r, &title, a.budget)
            .with_context(|| format!("writing {path}"))?;
    }
    Ok(())
}

/// The answer's first line: the workload, its size, the budget, the catalog and how it is priced.
fn print_header(a: &SearchArgs, p: &Prepared) {
    let (workload, catalog) = (&p.workload, &p.catalog);
    println!(
        "Cosine search: {} ({} entries of {} B, {} in all; {}) for ${}/month, {} catalog ({}); {}",
        workload.name.clone().unwrap_or_else(|| a.workload.clone()),
        describe::count(workload.entries as f64),
        describe::count(workload.entry_bytes() as f64),
        describe::bytes(workload.entries as f64 * workload.entry_bytes() as f64),
        describe_mix(workload),
        describe::count(a.budget),
        catalog.name,
        catalog.as_of,
        match p.opts.throughput {
            ThroughputModel::Physical => format!(
                "priced within each VM's volume, cores and memory, write buffers that recover within {}",
                describe::duration(p.opts.max_recovery_s)
            ),
            ThroughputModel::Paper => "priced by the paper's Eq. 3".to_string(),
        }
    );
}

/// The best configuration within the budget, and its neighbours on the frontier.
fn print_answer(r: &SearchResult, budget: f64, w: &cosine_design::Workload) {
    match &r.best {
        Some(best) => {
            println!("\nbest within budget:");
            print_config(best, true, w);
        }
        None => println!("\nno configuration fits a budget of ${:.2}/month", budget),
    }
    if let Some(c) = &r.cheaper {
        println!("\ncheaper on the frontier:");
        print_config(c, false, w);
    }
    if let Some(c) = &r.faster {
        println!("\nfaster on the frontier (above the budget):");
        print_config(c, false, w);
    }
}

/// Each fixed design's best configuration with the same money, against Cosine's: the speedup across φ's
/// evidence (its conservative end the headline where φ was noisy or bounded), the I/Os, limits and φ behind
/// it, and the margin split into φ and the rest.
fn print_fixed_designs(r: &SearchResult, p: &Prepared) {
    let budget = p.opts.budget;
    println!(
        "\nfixed designs with the same money (best configuration at or below ${}/month):",
        describe::count(budget)
    );
    for (b, f) in &r.baselines {
        let Some(c) = cosine_search::continuum::best_within(f, budget) else {
            println!("  {:<11} cannot run within this budget", b.name());
            continue;
        };
        let range = r
            .best
            .as_ref()
            .and_then(|best| margin_across_phi(best, c, b.phi_key(), p));
        println!(
            "  {:<11} {:<6} {:<28} ${:>10.2}/month {:>14} ops/s   {}",
            b.name(),
            c.provider,
            c.describe(),
            c.monthly_usd(),
            describe::count(c.throughput),
            headline(speedup(r.best.as_ref(), Some(c)), range)
        );
        let (Some(best), Some(mine)) = (&r.best, c.parts.first()) else {
            continue;
        };
        let ours = &best.parts[0].design;
        // where the margin comes from: the I/Os each operation costs, what bounds each side, the CPU's share
        println!(
            "  {:<11} {:.3} I/Os per op against Cosine's {:.3}; bound by {} against Cosine's {}; phi {:.3} against {:.3}; {} vCPUs against {}",
            "",
            mine.design.io_per_op,
            ours.io_per_op,
            bound_of(&mine.design),
            bound_of(ours),
            mine.design.phi,
            ours.phi,
            c.parts.iter().map(|p| p.count * p.vcpus).sum::<u32>(),
            best.parts.iter().map(|p| p.count * p.vcpus).sum::<u32>(),
        );
        // the margin as φ times the rest, both orders of pricing averaged
        match cosine_search::continuum::margin_split(best, c) {
            Some(m) => println!(
                "  {:<11} Cosine / {} = {:.2} = phi {:.2} x the rest (I/Os, volumes, VMs) {:.2}; these VMs at Cosine's phi would run {} ops/s, Cosine's at {}'s phi {} (phi: the geometric mean of the two)",
                "", b.name(), m.total, m.phi, m.rest, describe::count(m.theirs_at_our_phi), b.name(), describe::count(m.ours_at_their_phi),
            ),
            None => println!(
                "  {:<11} (no split into phi and the rest: VM types running designs of different phi)",
                ""
            ),
        }
    }
    print_cores_measured(r, p);
}

/// "Cosine is 1.1x faster", with the range over φ's evidence; where that evidence is weak, the conservative end
/// leads.
fn headline(total: Option<f64>, range: Option<(MarginRange, bool)>) -> String {
    let ratio = |x: f64| {
        if x >= 1.0 {
            format!("{x:.2}x faster")
        } else {
            format!("{:.2}x slower", 1.0 / x)
        }
    };
    match (total, range) {
        (Some(x), Some((m, uncertain))) if x > 0.0 => {
            let spread = if (m.high - m.low).abs() < 0.005 * x {
                String::new()
            } else {
                format!(
                    " ({:.2}-{:.2} as φ ranges over its measured rounds)",
                    m.low, m.high
                )
            };
            if uncertain && m.low < x {
                format!(
                    "Cosine is {} at the conservative end of noisy φ ({} at the values kept){spread}",
                    ratio(m.low),
                    ratio(x)
                )
            } else {
                format!("Cosine is {}{spread}", ratio(x))
            }
        }
        (Some(x), None) if x > 0.0 => format!("Cosine is {}", ratio(x)),
        _ => "no Cosine configuration to compare".to_string(),
    }
}

/// What bounds a design's VM ("IOPS", "CPU", ...), or Eq. 3 under the paper's model.
fn bound_of(s: &cosine_search::designs::Scored) -> &'static str {
    s.delivered.map_or("Eq. 3", |d| d.bound.as_str())
}

/// Where φ's evidence ends: the cores it was measured on, against the VMs priced.
fn print_cores_measured(r: &SearchResult, p: &Prepared) {
    let Some(cores) = p.phi.cores else {
        return;
    };
    let most = r
        .best
        .iter()
        .chain(
            r.baselines
                .iter()
                .filter_map(|(_, f)| cosine_search::continuum::best_within(f, p.opts.budget)),
        )
        .flat_map(|c| c.parts.iter().map(|p| p.vcpus))
        .max()
        .unwrap_or(0);
    if most > cores {
        println!(
            "  φ was measured on up to {cores} cores; these VMs have up to {most} vCPUs: Eq. 2 extrapolates it{}",
            match p.opts.throughput {
                ThroughputModel::Physical => " (it moves only the cores' limit, not the volume's)",
                ThroughputModel::Paper => "",
            }
        );
    }
}

/// Where the φ values came from: the library's machine line, the systems that keep the authors' values, and
/// the values the calibration had to bound.
fn print_phi_sources(r: &SearchResult, phi: &PhiLibrary) {
    // where the CPU coefficients came from: a system whose φ is the authors' was not measured here
    let borrowed: Vec<&str> = r
        .baselines
        .iter()
        .map(|(b, _)| b.phi_key())
        .filter(|k| phi.get(k).is_some() && phi.get(k) == PhiLibrary::paper().get(k))
        .collect();
    println!(
        "φ: {}{}",
        phi.machine,
        if borrowed.is_empty() || *phi == PhiLibrary::paper() {
            String::new()
        } else {
            format!(
                "; {} keeps the authors' values (not measured here)",
                borrowed.join(", ")
            )
        }
    );
    // a value the calibration had to bound (no speedup, or more than the cores) is said so beside the margin
    // it explains, for the systems shown and Cosine's pick; noisy values are counted, the library lists them
    let mut shown: Vec<String> = r
        .baselines
        .iter()
        .map(|(b, _)| b.phi_key().to_string())
        .collect();
    if let Some(best) = &r.best {
        shown.push(best.parts[0].design.class.as_str().to_string());
    }
    let mut noisy = 0;
    for key in &shown {
        for (op, note) in phi.notes_of(key) {
            match note.split_once("; noisy") {
                Some((bounded, _)) if bounded.starts_with("measured") => {
                    println!("  phi {key}.{op}: {bounded}")
                }
                _ if note.starts_with("measured") => println!("  phi {key}.{op}: {note}"),
                _ => noisy += 1,
            }
        }
    }
    if noisy > 0 {
        println!("  {noisy} more of these phi values came from rounds that disagreed by over 0.2 (the library's notes list them)");
    }
}

/// With a performance target: the cheapest configuration that meets it.
fn print_target(target: Option<(String, Option<Config>)>, w: &cosine_design::Workload) {
    if let Some((label, c)) = &target {
        println!("\ncheapest configuration that meets the {label}:");
        match c {
            Some(c) => print_config(c, false, w),
            None => println!("  none within the cost range searched"),
        }
    }
}

/// The files written.
fn print_written(a: &SearchArgs) {
    if let Some(p) = &a.design_out {
        println!("\nwrote the best design to {p}");
    }
    if let Some(p) = &a.deployment_out {
        println!("wrote the best configuration's deployment to {p}");
    }
    if let Some(p) = &a.plot {
        println!("wrote the frontier plot to {p}");
    }
}

/// How much the search looked at, and how long it took.
fn print_counts(r: &SearchResult, elapsed: f64) {
    println!(
        "\nsearched {} configurations and {} designs ({} priced by the model, the rest shared between VM types \
         of one memory size) over {} VM types in {:.2} s",
        r.counts.configurations,
        r.counts.designs,
        r.counts.evaluations,
        r.counts.vm_types,
        elapsed
    );
}

/// The best configuration as a deployment (one shard per VM) for `cosine generate --deployment`.
fn deployment_of(best: &Config) -> cosine_design::Deployment {
    let shards = best
        .parts
        .iter()
        .flat_map(|p| {
            (0..p.count).map(move |_| cosine_design::ShardSpec {
                vm: p.vm.clone(),
                memory_bytes: (p.memory_gib * 1024.0 * 1024.0 * 1024.0) as u64,
                design: p.design.design.clone(),
                reserved_bytes: Some((p.reserved_gib * 1024.0 * 1024.0 * 1024.0) as u64),
            })
        })
        .collect();
    cosine_design::Deployment {
        provider: best.provider.clone(),
        shards,
    }
}

/// `--rocksdb-options-out`: the best configuration's design (of its first VM type) as a RocksDB OPTIONS file, for
/// its entries per VM.
fn write_rocksdb_options(
    path: &str,
    r: &SearchResult,
    workload: &cosine_design::Workload,
) -> Result<()> {
    let best = r.best.as_ref().ok_or_else(|| {
        anyhow!("--rocksdb-options-out: no configuration fits the budget, so no design to write")
    })?;
    let part = &best.parts[0];
    let o = cosine_design::rocksdb::RocksDbOptions::for_design(
        &part.design.design,
        part.entries_per_vm,
        workload.entry_bytes(),
        workload.key_bytes,
    )
    .map_err(|e| anyhow!("--rocksdb-options-out, the best configuration's design: {e}"))?;
    std::fs::write(path, o.options_file()).with_context(|| format!("writing {path}"))?;
    for n in &o.notes {
        eprintln!("approximate: {n}");
    }
    Ok(())
}

fn print_config(c: &Config, detail: bool, w: &cosine_design::Workload) {
    println!(
        "  {:<6} {:<40} ${:>10.2}/month   {:>12} ops/s   its {} operations in {}",
        c.provider,
        c.describe(),
        c.monthly_usd(),
        describe::count(c.throughput),
        describe::count(w.operations as f64),
        describe::duration(c.latency_s)
    );
    if !detail {
        return;
    }
    println!(
        "         compute ${:.2} + storage ${:.2} + SLAs ${:.2}",
        c.cost.compute_usd, c.cost.storage_usd, c.cost.sla_usd
    );
    for p in &c.parts {
        print_part(p, w);
    }
}

/// One VM type of a configuration: the machine, the design, and what each VM delivers.
fn print_part(p: &cosine_search::continuum::Part, w: &cosine_design::Workload) {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    let s = &p.design;
    let d = &s.design;
    println!(
        "         {} x {}: {} vCPU, {} ({} to the design, {} kept for the OS and the engine); a volume of {} IOPS, {} MiB/s, {} a read; {} entries ({}) each",
        p.count,
        p.vm,
        p.vcpus,
        describe::bytes(p.memory_gib * GIB),
        describe::bytes(d.memory_bytes() as f64),
        describe::bytes(p.reserved_gib * GIB),
        describe::count(p.iops),
        if p.mibps.is_finite() { describe::count(p.mibps) } else { "unbounded".into() },
        describe::duration(p.read_latency_us * 1e-6),
        describe::count(p.entries_per_vm as f64),
        describe::bytes(p.entries_per_vm as f64 * w.entry_bytes() as f64),
    );
    println!(
        "         {} design T={} K={} Z={} M_B={} M_BF={} M_FP={} M_BC={}; {:.3} I/Os per op ({:.3} random reads{}, {:.3} blocks in sequence); phi {:.3}",
        s.class,
        d.size_ratio,
        d.hot_runs,
        d.cold_runs,
        describe::bytes(d.buffer_bytes as f64),
        describe::bytes(d.filter_bytes as f64),
        describe::bytes(d.fence_bytes as f64),
        describe::bytes(d.cache_bytes as f64),
        s.io_per_op,
        s.requests.random_reads,
        if s.requests.cached_share > 0.0005 {
            format!(
                ", {:.1}% of them from the page cache",
                s.requests.cached_share * 100.0
            )
        } else {
            String::new()
        },
        s.requests.sequential_blocks,
        s.phi
    );
    if let Some(del) = &s.delivered {
        println!(
            "         each VM: {} ops/s at most, bound by {} (IOPS {:.0}%, bandwidth {:.0}%, cores {:.0}% used; {} reads in flight, {:.0} to reach its IOPS); an operation {} unloaded; recovers from a restart in {}",
            describe::count(del.ops_per_s),
            del.bound.as_str(),
            del.iops_used * 100.0,
            del.bandwidth_used * 100.0,
            (del.ops_per_s / del.cpu_limit).min(1.0) * 100.0,
            describe::count(p.in_flight),
            p.iops * p.read_latency_us * 1e-6,
            describe::duration(del.op_latency_s),
            describe::duration(s.recovery_s),
        );
    }
}
