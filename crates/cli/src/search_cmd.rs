//! `cosine search`: the main job.

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_cloud_pricing::Sla;
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::load_workload;
use cosine_search::continuum::{search, Config, SearchOptions, SearchResult};
use cosine_search::designs::Baseline;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Arguments of `cosine search`.
#[derive(Parser, Debug)]
pub struct SearchArgs {
    /// Monthly budget in USD.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) budget: f64,
    /// A workload name (ycsb-a..ycsb-f, endure-w0..w14) or a workload.json file.
    #[arg(long)]
    pub(crate) workload: String,
    /// Providers to search, comma-separated.
    #[arg(long, default_value = "aws,gcp,azure")]
    pub(crate) providers: String,
    /// SLA add-ons: migration, support (devops), backup, reliability, availability.
    #[arg(long, default_value = "")]
    pub(crate) sla: String,
    /// Entries in the data set (overrides the workload's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) entries: Option<f64>,
    /// Key size in bytes (overrides the workload's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) key_bytes: Option<f64>,
    /// Value size in bytes (overrides the workload's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) value_bytes: Option<f64>,
    /// Memory-hopping step ε as a fraction of VM memory.
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    pub(crate) epsilon: f64,
    /// Use Endure's robust objective with this KL radius instead of Cosine's 10% noise.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) rho: Option<f64>,
    /// Price catalog: "current" (embedded), "paper", or a catalog JSON file.
    #[arg(long, default_value = "current")]
    pub(crate) catalog: String,
    /// Most VMs in one configuration.
    #[arg(long, default_value_t = 32)]
    pub(crate) max_vms: u32,
    /// φ library: `learned` (the default: the one `cosine calibrate` learned on this project's 2-core machine,
    /// FASTER's from the authors), `paper` (the authors' values), or a JSON file from `cosine calibrate`.
    #[arg(long)]
    pub(crate) phi: Option<String>,
    /// Write the best configuration's design (of its first VM type) as design.json for the engine.
    #[arg(long)]
    pub(crate) design_out: Option<String>,
    /// Write the best configuration as deployment.json (one shard per VM) for `cosine generate --deployment`.
    #[arg(long)]
    pub(crate) deployment_out: Option<String>,
    /// Write the best configuration's design (of its first VM type) as a RocksDB 7.x OPTIONS file, for its
    /// entries per VM; refused (exit 2) when that design is not LSM-class.
    #[arg(long)]
    pub(crate) rocksdb_options_out: Option<String>,
    /// Draw the frontier, with the fixed designs, as an SVG.
    #[arg(long)]
    pub(crate) plot: Option<String>,
    /// A latency target in seconds for the whole workload: also answer the cheapest configuration meeting it.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) latency_target: Option<f64>,
    /// A throughput target in operations per second: also answer the cheapest configuration meeting it.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) throughput_target: Option<f64>,
    /// Print one JSON document.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `v` as a whole number of at least 1, or `name`'s one-line error.
pub(crate) fn positive_int(name: &str, v: Option<f64>) -> Result<Option<u64>> {
    match v {
        None => Ok(None),
        Some(x) if x.is_finite() && x >= 1.0 && x.fract() == 0.0 => Ok(Some(x as u64)),
        Some(x) => bail!("{name} must be a positive whole number, got {x}"),
    }
}

/// A search's inputs, checked: what `cosine search` and the explorer's `/api/search` run.
pub(crate) struct Prepared {
    /// The workload, with the overrides applied.
    pub(crate) workload: cosine_design::Workload,
    /// The catalog searched.
    pub(crate) catalog: cosine_cloud_pricing::Catalog,
    /// The search's options.
    pub(crate) opts: SearchOptions,
    /// The φ library.
    pub(crate) phi: PhiLibrary,
}

/// Checks `a` (with `workload` instead of loading `a.workload` when given) and builds the search's inputs; the
/// errors are the command's one-line messages.
pub(crate) fn prepare(
    a: &SearchArgs,
    workload: Option<cosine_design::Workload>,
) -> Result<Prepared> {
    if !(a.budget.is_finite() && a.budget > 0.0) {
        bail!(
            "--budget must be a positive number of USD per month, got {}",
            a.budget
        );
    }
    if !(a.epsilon > 0.0 && a.epsilon <= 0.5) {
        bail!("--epsilon must be in (0, 0.5], got {}", a.epsilon);
    }
    if let Some(r) = a.rho {
        if !(r.is_finite() && r >= 0.0) {
            bail!("--rho must be a non-negative number, got {r}");
        }
    }
    if a.max_vms == 0 {
        bail!("--max-vms must be at least 1");
    }
    let mut workload = match workload {
        Some(w) => w,
        None => load_workload(&a.workload).with_context(|| format!("workload {}", a.workload))?,
    };
    if let Some(n) = positive_int("--entries", a.entries)? {
        workload.entries = n;
    }
    if let Some(k) = positive_int("--key-bytes", a.key_bytes)? {
        workload.key_bytes = k;
    }
    if let Some(v) = a.value_bytes {
        if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0) {
            bail!("--value-bytes must be a non-negative whole number, got {v}");
        }
        workload.value_bytes = v as u64;
    }
    workload.validate()?;
    let catalog = cosine_cloud_pricing::load(&a.catalog)?;
    let mut opts = SearchOptions::new(a.budget);
    opts.providers = Vec::new();
    for p in a
        .providers
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
    {
        if !catalog.providers.iter().any(|x| x.id == p) {
            bail!("unknown provider '{p}' (known: aws, gcp, azure)");
        }
        opts.providers.push(p);
    }
    if opts.providers.is_empty() {
        bail!("--providers names no provider");
    }
    for s in a.sla.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        opts.slas.push(Sla::parse(s).ok_or_else(|| {
            anyhow!(
                "unknown SLA '{s}' (known: migration, support, backup, reliability, availability)"
            )
        })?);
    }
    opts.epsilon = a.epsilon;
    opts.rho = a.rho;
    if a.rho.is_some() {
        opts.noise = 0.0;
    }
    opts.max_vms = a.max_vms;
    for (name, v) in [
        ("--latency-target", a.latency_target),
        ("--throughput-target", a.throughput_target),
    ] {
        if let Some(x) = v {
            if !(x.is_finite() && x > 0.0) {
                bail!("{name} must be a positive number, got {x}");
            }
        }
    }
    let phi = match &a.phi {
        Some(p) => PhiLibrary::named_or_file(p)?,
        None => PhiLibrary::default(),
    };
    Ok(Prepared {
        workload,
        catalog,
        opts,
        phi,
    })
}

/// The search's answer at `budget` as one JSON document (`cosine search --json`, the explorer's `/api/search`):
/// the result is read at the budget, so one search serves every budget up to its cost range.
pub(crate) fn search_json(
    a: &SearchArgs,
    p: &Prepared,
    r: &SearchResult,
    elapsed: f64,
) -> serde_json::Value {
    let best = cosine_search::continuum::best_within(&r.frontier, a.budget);
    let i = r.frontier.partition_point(|c| c.monthly_usd() <= a.budget);
    let cheaper = i.checked_sub(2).map(|i| &r.frontier[i]);
    let faster = r.frontier.get(i);
    let target = target_answer(r, a.latency_target, a.throughput_target, a.budget);
    let baselines: Vec<serde_json::Value> = r
        .baselines
        .iter()
        .map(|(b, f)| {
            let fixed = cosine_search::continuum::best_within(f, a.budget);
            // how much of the margin φ makes
            let split = best
                .zip(fixed)
                .and_then(|(ours, c)| cosine_search::continuum::margin_split(ours, c));
            serde_json::json!({"system": b.name(), "best": fixed, "speedup_of_cosine": speedup(best, fixed),
                "margin_split": split})
        })
        .collect();
    serde_json::json!({
        "budget": a.budget,
        "workload": p.workload.name.clone().unwrap_or_else(|| a.workload.clone()),
        "catalog": p.catalog.name,
        "best": best,
        "cheaper": cheaper,
        "faster": faster,
        "frontier": r.frontier,
        "baselines": baselines,
        "target": target.as_ref().map(|(label, c)| serde_json::json!({"met_by": label, "cheapest": c})),
        "search": {"seconds": elapsed, "configurations": r.counts.configurations, "designs": r.counts.designs, "evaluations": r.counts.evaluations, "vm_types": r.counts.vm_types},
    })
}

/// The best configuration as a deployment (one shard per VM) for `cosine generate --deployment`.
pub(crate) fn deployment_of(best: &Config) -> cosine_design::Deployment {
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

/// Runs `cosine search`.
pub fn run(a: SearchArgs) -> Result<()> {
    let p = prepare(&a, None)?;
    let (workload, catalog, phi) = (&p.workload, &p.catalog, &p.phi);
    let t = std::time::Instant::now();
    let r = run_with_progress(catalog, workload, phi, p.opts.clone())?;
    let elapsed = t.elapsed().as_secs_f64();
    let target = target_answer(&r, a.latency_target, a.throughput_target, a.budget);
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
        crate::plot::write_svg(path, &r, &title, a.budget)
            .with_context(|| format!("writing {path}"))?;
    }
    // written before the answer is printed, refused (exit 2) after it: a refusal does not hide the answer
    let rocksdb = match &a.rocksdb_options_out {
        Some(path) => write_rocksdb_options(path, &r, workload),
        None => Ok(()),
    };
    if a.json {
        let v = search_json(&a, &p, &r, elapsed);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return rocksdb;
    }
    println!(
        "Cosine search: {} ({} entries of {} B, {}) for ${:.0}/month, {} catalog ({})",
        workload.name.clone().unwrap_or_else(|| a.workload.clone()),
        workload.entries,
        workload.entry_bytes(),
        crate::commands::describe_mix(workload),
        a.budget,
        catalog.name,
        catalog.as_of
    );
    match &r.best {
        Some(best) => {
            println!("\nbest within budget:");
            print_config(best, true);
        }
        None => println!("\nno configuration fits a budget of ${:.2}/month", a.budget),
    }
    if let Some(c) = &r.cheaper {
        println!("\ncheaper on the frontier:");
        print_config(c, false);
    }
    if let Some(c) = &r.faster {
        println!("\nfaster on the frontier (above the budget):");
        print_config(c, false);
    }
    println!(
        "\nfixed designs with the same money (best configuration at or below ${:.0}/month):",
        a.budget
    );
    for (b, f) in &r.baselines {
        match cosine_search::continuum::best_within(f, a.budget) {
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
    if let Some((label, c)) = &target {
        println!("\ncheapest configuration that meets the {label}:");
        match c {
            Some(c) => print_config(c, false),
            None => println!("  none within the cost range searched"),
        }
    }
    if let Some(p) = &a.design_out {
        println!("\nwrote the best design to {p}");
    }
    if let Some(p) = &a.deployment_out {
        println!("wrote the best configuration's deployment to {p}");
    }
    if let Some(p) = &a.plot {
        println!("wrote the frontier plot to {p}");
    }
    println!(
        "\nsearched {} configurations and {} designs ({} priced by the model, the rest shared between VM types \
         of one memory size) over {} VM types in {:.2} s",
        r.counts.configurations,
        r.counts.designs,
        r.counts.evaluations,
        r.counts.vm_types,
        elapsed
    );
    rocksdb
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

fn speedup(cosine: Option<&Config>, other: Option<&Config>) -> Option<f64> {
    Some(cosine?.throughput / other?.throughput)
}

/// With a performance target: the cheapest configuration on the frontier that meets it.
type Check = Box<dyn Fn(&Config) -> bool>;

fn target_answer(
    r: &SearchResult,
    latency: Option<f64>,
    throughput: Option<f64>,
    _budget: f64,
) -> Option<(String, Option<Config>)> {
    let (label, ok): (String, Check) = match (latency, throughput) {
        (Some(l), _) => (
            format!("latency target of {l} s"),
            Box::new(move |c: &Config| c.latency_s <= l),
        ),
        (None, Some(t)) => (
            format!("throughput target of {t} ops/s"),
            Box::new(move |c: &Config| c.throughput >= t),
        ),
        (None, None) => return None,
    };
    Some((label, r.frontier.iter().find(|c| ok(c)).cloned()))
}

/// Runs the search, with a spinner on stderr while it takes more than a moment (hidden when stderr is not a
/// terminal).
pub(crate) fn run_with_progress(
    catalog: &cosine_cloud_pricing::Catalog,
    workload: &cosine_design::Workload,
    phi: &PhiLibrary,
    mut opts: SearchOptions,
) -> Result<SearchResult> {
    let counter = Arc::new(AtomicUsize::new(0));
    opts.progress = Some(counter.clone());
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} searching: {msg} configurations scored ({elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let result = std::thread::scope(|s| {
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let handle = s.spawn(move || {
            let r = search(catalog, workload, phi, &opts);
            // the receiver waits below for as long as this thread runs
            let _ = done.send(());
            r
        });
        let start = std::time::Instant::now();
        // wake when the search ends (not at the next tick), redrawing every 100 ms after the first 300
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            finished.recv_timeout(std::time::Duration::from_millis(100))
        {
            if start.elapsed().as_millis() > 300 {
                bar.set_message(counter.load(Ordering::Relaxed).to_string());
                bar.tick();
            }
        }
        handle.join()
    });
    bar.finish_and_clear();
    result.map_err(|_| anyhow!("the search failed unexpectedly"))
}

/// `cosine compare`: Figure 5 as a table.
#[derive(Parser, Debug)]
pub struct CompareArgs {
    /// A workload name or workload.json file.
    #[arg(long)]
    workload: String,
    /// Budgets in USD per month, comma-separated.
    #[arg(long, default_value = "1000,5000,20000,50000")]
    budgets: String,
    /// Providers to search.
    #[arg(long, default_value = "aws,gcp,azure")]
    providers: String,
    /// Price catalog: "current", "paper" or a file.
    #[arg(long, default_value = "current")]
    catalog: String,
    /// Entries in the data set (overrides the workload's).
    #[arg(long, allow_hyphen_values = true)]
    entries: Option<f64>,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// Runs `cosine compare`: one search over the whole range, read at each budget.
pub fn compare(a: CompareArgs) -> Result<()> {
    let mut budgets = Vec::new();
    for b in a
        .budgets
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let v: f64 = b
            .parse()
            .map_err(|_| anyhow!("budget '{b}' is not a number"))?;
        if !(v.is_finite() && v > 0.0) {
            bail!("budgets must be positive, got {v}");
        }
        budgets.push(v);
    }
    if budgets.is_empty() {
        bail!("--budgets names no budget");
    }
    let mut workload =
        load_workload(&a.workload).with_context(|| format!("workload {}", a.workload))?;
    if let Some(n) = positive_int("--entries", a.entries)? {
        workload.entries = n;
    }
    let catalog = cosine_cloud_pricing::load(&a.catalog)?;
    let top = budgets.iter().cloned().fold(0.0, f64::max);
    let mut opts = SearchOptions::new(top);
    opts.providers = Vec::new();
    for p in a
        .providers
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
    {
        if !catalog.providers.iter().any(|x| x.id == p) {
            bail!("unknown provider '{p}' (known: aws, gcp, azure)");
        }
        opts.providers.push(p);
    }
    let r = run_with_progress(&catalog, &workload, &PhiLibrary::default(), opts)?;
    let rows: Vec<serde_json::Value> = budgets
        .iter()
        .map(|&b| {
            let best = cosine_search::continuum::best_within(&r.frontier, b);
            let mut row = serde_json::json!({
                "budget": b,
                "cosine": best.map(|c| serde_json::json!({"throughput": c.throughput, "provider": c.provider, "vms": c.describe(), "class": c.parts[0].design.class, "monthly_usd": c.monthly_usd()})),
            });
            for (sys, f) in &r.baselines {
                let c = cosine_search::continuum::best_within(f, b);
                row[sys.name()] = serde_json::json!(c.map(|c| c.throughput));
            }
            row
        })
        .collect();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"workload": workload.name, "rows": rows})
            )?
        );
        return Ok(());
    }
    println!("{}: throughput (ops/s) at each monthly budget; the fixed designs choose their best hardware too", workload.name.clone().unwrap_or(a.workload));
    print!(
        "{:>10}  {:>14}  {:<34}",
        "budget", "Cosine", "(provider, VMs, class)"
    );
    for s in Baseline::ALL {
        print!("  {:>18}", s.name());
    }
    println!();
    for (b, row) in budgets.iter().zip(&rows) {
        let cosine = cosine_search::continuum::best_within(&r.frontier, *b);
        match cosine {
            Some(c) => print!(
                "{:>10}  {:>14.0}  {:<34}",
                format!("${b:.0}"),
                c.throughput,
                format!(
                    "{}, {}, {}",
                    c.provider,
                    c.describe(),
                    c.parts[0].design.class
                )
            ),
            None => print!(
                "{:>10}  {:>14}  {:<34}",
                format!("${b:.0}"),
                "-",
                "(nothing fits)"
            ),
        }
        for s in Baseline::ALL {
            match row[s.name()].as_f64() {
                Some(t) => {
                    let x = cosine.map(|c| c.throughput / t).unwrap_or(f64::NAN);
                    print!("  {:>10.0} ({:>4.1}x)", t, x)
                }
                None => print!("  {:>18}", "cannot run"),
            }
        }
        println!();
    }
    Ok(())
}
