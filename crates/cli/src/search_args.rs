//! The search's inputs and answer, shared by `cosine search`, `cosine compare` and the explorer: the arguments
//! of `cosine search` ([`SearchArgs`]) checked into the search's inputs ([`prepare`]), the search run with a
//! spinner ([`run_with_progress`]), and its answer at a budget as JSON ([`search_json`]).

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_cloud_pricing::Sla;
use cosine_cost_model::cpu::{CpuLibrary, PhiLibrary};
use cosine_cost_model::machine::ThroughputModel;
use cosine_design::load_workload;
use cosine_search::continuum::{
    margin_range, noisy_mix, search, Config, MarginRange, SearchOptions, SearchResult,
};
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
    /// Providers to search, comma-separated (default: every provider of the catalog).
    #[arg(long)]
    pub(crate) providers: Option<String>,
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
    /// How a design's I/Os become time: `physical` (the default: each VM within its volume's IOPS and
    /// bandwidth, its cores and the requests in flight; its memory less a reserve; a write buffer that recovers
    /// in time) or `paper` (the Cosine paper's Eq. 3, to reproduce its figures).
    #[arg(long, default_value = "physical")]
    pub(crate) throughput: String,
    /// Seconds a design's write buffer may take to recover after a restart (its log replayed at the volume's
    /// bandwidth, its frozen buffer flushed).
    #[arg(long, default_value_t = 60.0, allow_hyphen_values = true)]
    pub(crate) max_recovery: f64,
    /// Requests the engine keeps in flight on each VM (default: one per vCPU, as `cosine serve` answers point
    /// reads on one event-loop thread a core).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) in_flight: Option<f64>,
    /// A volume's read latency in microseconds, in place of the catalog's (1,000 for a network SSD).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) volume_latency_us: Option<f64>,
    /// Memory each VM keeps for its operating system, as MIB[,SHARE]: a fixed part in MiB and a share of the VM's
    /// memory (default for a cloud VM: 512,0.02).
    #[arg(long)]
    pub(crate) os_reserve: Option<String>,
    /// CPU library: `learned` (the default: `cosine profile` and `cosine-peers --measure-cpu` on this project's
    /// machine) or a file from `cosine profile`.
    #[arg(long)]
    pub(crate) cpu: Option<String>,
}

/// `--os-reserve MIB[,SHARE]` as (bytes, share).
fn os_reserve(text: &str) -> Result<(f64, f64)> {
    let mut parts = text.split(',');
    let mib: f64 = parts
        .next()
        .unwrap_or("")
        .trim()
        .parse()
        .map_err(|_| anyhow!("--os-reserve must be MIB[,SHARE], got {text}"))?;
    let share: f64 = match parts.next() {
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| anyhow!("--os-reserve must be MIB[,SHARE], got {text}"))?,
        None => 0.0,
    };
    if !(mib.is_finite() && mib >= 0.0 && share.is_finite() && (0.0..1.0).contains(&share))
        || parts.next().is_some()
    {
        bail!("--os-reserve must be MIB[,SHARE] with MIB >= 0 and SHARE in [0, 1), got {text}");
    }
    Ok((mib * 1024.0 * 1024.0, share))
}

/// A catalog VM whose volume gives no IOPS or no bandwidth cannot be priced: one clear error.
fn check_volumes(catalog: &cosine_cloud_pricing::Catalog, providers: &[String]) -> Result<()> {
    for p in catalog
        .providers
        .iter()
        .filter(|p| providers.contains(&p.id))
    {
        for (i, vm) in p.vms.iter().enumerate() {
            let q = cosine_cloud_pricing::quote(catalog, p, &[(i, 1)], 1e9, 0.5, 0.5, &[])?;
            let (iops, mibps) = (q.iops_per_vm[0], q.mibps_per_vm[0]);
            let missing = if iops.is_nan() || iops <= 0.0 {
                Some("IOPS")
            } else if mibps.is_nan() || mibps <= 0.0 {
                Some("bandwidth")
            } else {
                None
            };
            if let Some(what) = missing {
                bail!(
                    "catalog VM {} of {} has no {what} for its volume: the search cannot price what it delivers",
                    vm.name,
                    p.id
                );
            }
        }
    }
    Ok(())
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
    let all: Vec<String> = catalog.providers.iter().map(|p| p.id.clone()).collect();
    for p in a
        .providers
        .clone()
        .unwrap_or_else(|| all.join(","))
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
    {
        if !catalog.providers.iter().any(|x| x.id == p) {
            let known: Vec<&str> = catalog.providers.iter().map(|x| x.id.as_str()).collect();
            bail!("unknown provider '{p}' (known: {})", known.join(", "));
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
    opts.throughput = ThroughputModel::from_name(&a.throughput).ok_or_else(|| {
        anyhow!(
            "--throughput must be physical or paper, got {}",
            a.throughput
        )
    })?;
    if !(a.max_recovery.is_finite() && a.max_recovery > 0.0) {
        bail!(
            "--max-recovery must be a positive number of seconds, got {}",
            a.max_recovery
        );
    }
    opts.max_recovery_s = a.max_recovery;
    if let Some(n) = a.in_flight {
        if !(n.is_finite() && n >= 1.0) {
            bail!("--in-flight must be at least 1, got {n}");
        }
        opts.in_flight = Some(n);
    }
    if let Some(us) = a.volume_latency_us {
        if !(us.is_finite() && us > 0.0) {
            bail!("--volume-latency-us must be a positive number, got {us}");
        }
        opts.read_latency_s = Some(us * 1e-6);
    }
    if let Some(r) = &a.os_reserve {
        opts.os_reserve = Some(os_reserve(r)?);
    }
    if let Some(c) = &a.cpu {
        opts.cpu = CpuLibrary::named_or_file(c)?;
    }
    if opts.throughput == ThroughputModel::Physical {
        check_volumes(&catalog, &opts.providers)?;
    }
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
            // the margin as each side's φ ranges over its measured rounds
            let range = best
                .zip(fixed)
                .and_then(|(ours, c)| margin_across_phi(ours, c, b.phi_key(), p));
            serde_json::json!({"system": b.name(), "best": fixed, "speedup_of_cosine": speedup(best, fixed),
                "margin_split": split,
                "margin_across_phi": range.map(|(m, uncertain)| serde_json::json!({
                    "low": m.low, "high": m.high, "phi_noisy_or_bounded": uncertain}))})
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
        "throughput_model": p.opts.throughput,
        "max_recovery_s": p.opts.max_recovery_s,
        "phi_measured_on_cores": p.phi.cores,
        "search": {"seconds": elapsed, "configurations": r.counts.configurations, "designs": r.counts.designs, "evaluations": r.counts.evaluations, "vm_types": r.counts.vm_types},
    })
}

/// The margin of `ours` over `theirs` (the fixed system `system`) as each side's φ ranges over its measured
/// rounds, and whether either side's φ is weak evidence (bounded or noisy).
pub(crate) fn margin_across_phi(
    ours: &Config,
    theirs: &Config,
    system: &str,
    p: &Prepared,
) -> Option<(MarginRange, bool)> {
    let mix = if p.opts.rho.is_some() {
        p.workload.mix
    } else {
        noisy_mix(&p.workload.mix, p.opts.noise)
    };
    let class = ours.parts.first()?.design.class.as_str();
    let ours_phi = p.phi.workload_phi_range(class, &mix)?;
    let theirs_phi = p.phi.workload_phi_range(system, &mix)?;
    let uncertain = p.phi.is_uncertain(class) || p.phi.is_uncertain(system);
    Some((margin_range(ours, ours_phi, theirs, theirs_phi), uncertain))
}

/// How many times Cosine's throughput is the other configuration's; None when either is missing.
pub(crate) fn speedup(cosine: Option<&Config>, other: Option<&Config>) -> Option<f64> {
    Some(cosine?.throughput / other?.throughput)
}

/// Whether a configuration meets a performance target.
type Check = Box<dyn Fn(&Config) -> bool>;

/// The cheapest configuration of the frontier that meets the latency target (or else the throughput target),
/// with a label naming the target; None without a target.
pub(crate) fn target_answer(
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
