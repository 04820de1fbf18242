//! The search's inputs and answer, shared by `cosine search`, `cosine compare` and the explorer: the arguments
//! of `cosine search` ([`SearchArgs`]) checked into the search's inputs ([`prepare`]), the search run with a
//! spinner ([`run_with_progress`]), and its answer at a budget as JSON ([`search_json`]).

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use cosine_cloud_pricing::Sla;
use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::load_workload;
use cosine_search::continuum::{search, Config, SearchOptions, SearchResult};
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
