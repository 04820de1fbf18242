//! `cosine search`: the main job. The search's inputs and its JSON answer are `search_args`'s (shared with
//! `cosine compare` and the explorer); this module writes the files the flags ask for and prints the answer.

use crate::describe::describe_mix;
use crate::search_args::{
    prepare, run_with_progress, search_json, speedup, target_answer, Prepared, SearchArgs,
};
use anyhow::{anyhow, Context, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_search::continuum::{Config, SearchResult};

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
    print_answer(&r, a.budget);
    print_fixed_designs(&r, a.budget);
    print_phi_sources(&r, &p.phi);
    print_target(target);
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

/// The answer's first line: the workload, the budget and the catalog.
fn print_header(a: &SearchArgs, p: &Prepared) {
    let (workload, catalog) = (&p.workload, &p.catalog);
    println!(
        "Cosine search: {} ({} entries of {} B, {}) for ${:.0}/month, {} catalog ({})",
        workload.name.clone().unwrap_or_else(|| a.workload.clone()),
        workload.entries,
        workload.entry_bytes(),
        describe_mix(workload),
        a.budget,
        catalog.name,
        catalog.as_of
    );
}

/// The best configuration within the budget, and its neighbours on the frontier.
fn print_answer(r: &SearchResult, budget: f64) {
    match &r.best {
        Some(best) => {
            println!("\nbest within budget:");
            print_config(best, true);
        }
        None => println!("\nno configuration fits a budget of ${:.2}/month", budget),
    }
    if let Some(c) = &r.cheaper {
        println!("\ncheaper on the frontier:");
        print_config(c, false);
    }
    if let Some(c) = &r.faster {
        println!("\nfaster on the frontier (above the budget):");
        print_config(c, false);
    }
}

/// Each fixed design's best configuration with the same money, against Cosine's: the speedup, the I/Os and φ
/// behind it, and the margin split into φ and the rest.
fn print_fixed_designs(r: &SearchResult, budget: f64) {
    println!(
        "\nfixed designs with the same money (best configuration at or below ${:.0}/month):",
        budget
    );
    for (b, f) in &r.baselines {
        match cosine_search::continuum::best_within(f, budget) {
            Some(c) => {
                println!(
                    "  {:<11} {:<6} {:<28} ${:>10.2}/month {:>14.0} ops/s   {}",
                    b.name(),
                    c.provider,
                    c.describe(),
                    c.monthly_usd(),
                    c.throughput,
                    match speedup(r.best.as_ref(), Some(c)) {
                        Some(x) if x >= 1.0 => format!("Cosine is {x:.1}x faster"),
                        Some(x) if x > 0.0 => format!("Cosine is {:.1}x slower", 1.0 / x),
                        _ => "no Cosine configuration to compare".to_string(),
                    }
                );
                // where the margin comes from: the I/Os each operation costs, and the CPU's parallel share
                if let (Some(best), Some(mine)) = (&r.best, c.parts.first()) {
                    let ours = &best.parts[0].design;
                    println!(
                        "  {:<11} {:.3} I/Os per op against Cosine's {:.3}; phi {:.3} against Cosine's {:.3}; {} vCPUs against {}",
                        "",
                        mine.design.io_per_op,
                        ours.io_per_op,
                        mine.design.phi,
                        ours.phi,
                        c.parts.iter().map(|p| p.count * p.vcpus).sum::<u32>(),
                        best.parts.iter().map(|p| p.count * p.vcpus).sum::<u32>(),
                    );
                    // the margin as φ times the rest, both orders of pricing averaged
                    match cosine_search::continuum::margin_split(best, c) {
                        Some(m) => println!(
                            "  {:<11} Cosine / {} = {:.2} = phi {:.2} x the rest (I/Os, IOPS, VMs) {:.2}; these VMs at Cosine's phi would run {:.0} ops/s, Cosine's at {}'s phi {:.0} (phi: the geometric mean of the two)",
                            "", b.name(), m.total, m.phi, m.rest, m.theirs_at_our_phi, b.name(), m.ours_at_their_phi,
                        ),
                        None => println!(
                            "  {:<11} (no split into phi and the rest: VM types running designs of different phi)",
                            ""
                        ),
                    }
                }
            }
            None => println!("  {:<11} cannot run within this budget", b.name()),
        }
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
fn print_target(target: Option<(String, Option<Config>)>) {
    if let Some((label, c)) = &target {
        println!("\ncheapest configuration that meets the {label}:");
        match c {
            Some(c) => print_config(c, false),
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

fn print_config(c: &Config, detail: bool) {
    println!(
        "  {:<6} {:<40} ${:>10.2}/month   {:>12.0} ops/s   latency {:.1} s for the workload",
        c.provider,
        c.describe(),
        c.monthly_usd(),
        c.throughput,
        c.latency_s
    );
    if detail {
        println!(
            "         compute ${:.2} + storage ${:.2} + SLAs ${:.2}",
            c.cost.compute_usd, c.cost.storage_usd, c.cost.sla_usd
        );
        for p in &c.parts {
            let d = &p.design.design;
            println!(
                "         {} x {} ({} vCPU, {:.0} GiB, {:.0} IOPS, {} entries each): {} design T={} K={} Z={} M_B={:.1} MiB M_BF={:.1} MiB M_FP={:.1} MiB, {:.3} I/Os per op, phi {:.3}",
                p.count,
                p.vm,
                p.vcpus,
                p.memory_gib,
                p.iops,
                p.entries_per_vm,
                p.design.class,
                d.size_ratio,
                d.hot_runs,
                d.cold_runs,
                d.buffer_bytes as f64 / 1048576.0,
                d.filter_bytes as f64 / 1048576.0,
                d.fence_bytes as f64 / 1048576.0,
                p.design.io_per_op,
                p.design.phi
            );
        }
    }
}
