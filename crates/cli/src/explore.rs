//! `cosine explore`: the what-if explorer. A local web page over the search (the Cosine paper's demo) and the
//! JSON API behind it:
//!
//! - `GET /`: the page (embedded in the binary: no CDN, works offline);
//! - `GET /api/workloads`: the named workloads, as workload.json objects;
//! - `POST /api/workload`: a dropped workload.json or YCSB property file, read as a workload;
//! - `POST /api/search`: what `cosine search --json` answers, plus each provider's frontier and each fixed
//!   design's; searches are cached by everything but the budget, so moving the budget answers at once;
//! - `POST /api/compare`: `cosine compare --json`'s rows, from the same cache;
//! - `POST /api/cost`: `cosine cost --json` for a design on a workload (the page draws a design's levels);
//! - `POST /api/deployment`: a configuration of the frontier as deployment.json;
//! - `POST /api/rocksdb-options`: `cosine export rocksdb` for a design (`design`, `entries`, `entry_bytes`,
//!   `key_bytes`):
//!   the OPTIONS file's text and the notes where the mapping is approximate.
//!
//! An error is the command line's one-line message, with the request field it belongs to.

use crate::search_args::{self, Prepared, SearchArgs};
use anyhow::{anyhow, Result};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Parser;
use cosine_cost_model::{DistributionAware, IoModel};
use cosine_design::{named_workload, workload_names, Design, Workload};
use cosine_search::continuum::{best_within, search, SearchResult};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The page: HTML, CSS and JavaScript in one file, drawn as SVG by the page itself.
const PAGE: &str = include_str!("../assets/explore.html");

/// Searches kept for re-reading at other budgets.
const CACHED_SEARCHES: usize = 16;

/// Arguments of `cosine explore`.
#[derive(Parser, Debug)]
pub struct ExploreArgs {
    /// Address to serve on; port 0 picks a free one. The URL is printed once the server listens.
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: String,
    /// Price catalog: "current" (embedded), "paper", or a catalog JSON file.
    #[arg(long, default_value = "current")]
    catalog: String,
    /// φ library, as `cosine search --phi`: `learned` (the default), `paper`, or a file from `cosine calibrate`.
    #[arg(long)]
    phi: Option<String>,
}

/// One search, as the cache keeps it.
struct Done {
    prepared: Prepared,
    result: SearchResult,
    seconds: f64,
}

struct App {
    catalog: String,
    phi: Option<String>,
    cache: Mutex<VecDeque<(String, Arc<Done>)>>,
}

/// A request's failure: the message the command line prints, and the field it concerns.
#[derive(Debug)]
struct ApiError {
    field: &'static str,
    message: String,
    status: StatusCode,
}

impl ApiError {
    fn bad(field: &'static str, e: impl std::fmt::Display) -> Self {
        ApiError {
            field,
            message: format!("{e:#}").replace('\n', " "),
            status: StatusCode::BAD_REQUEST,
        }
    }

    /// The field a command-line message is about, from the flag or noun it starts with.
    fn from_cli(e: anyhow::Error) -> Self {
        let message = format!("{e:#}").replace('\n', " ");
        let field = [
            ("--budget", "budget"),
            ("--epsilon", "epsilon"),
            ("--rho", "rho"),
            ("--max-vms", "max_vms"),
            ("--providers", "providers"),
            ("unknown provider", "providers"),
            ("unknown SLA", "sla"),
            ("--latency-target", "latency_target"),
            ("--throughput-target", "throughput_target"),
            ("--entries", "entries"),
            ("--key-bytes", "key_bytes"),
            ("--value-bytes", "value_bytes"),
            ("--phi", "phi"),
        ]
        .iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map_or("workload", |(_, f)| f);
        ApiError {
            field,
            message,
            status: StatusCode::BAD_REQUEST,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({"error": self.message, "field": self.field})),
        )
            .into_response()
    }
}

type ApiResult = std::result::Result<Json<Value>, ApiError>;

/// A request body parsed as `T`; a malformed one is an error about the request, in the same JSON shape.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> std::result::Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad("request", format!("malformed request: {e}")))
}

/// A workload in a request: a named workload's name, or a workload.json object.
fn workload_of(v: &Value) -> std::result::Result<Workload, ApiError> {
    match v {
        Value::String(name) => named_workload(name).map_err(|e| ApiError::bad("workload", e)),
        Value::Object(_) => {
            Workload::from_json(&v.to_string()).map_err(|e| ApiError::bad("workload", e))
        }
        _ => Err(ApiError::bad(
            "workload",
            "the workload must be a name (ycsb-a … ycsb-f, endure-w0 … endure-w14) or a workload.json object",
        )),
    }
}

/// The body of `/api/search` (and `/api/compare`): `cosine search`'s flags as fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchRequest {
    workload: Value,
    #[serde(default)]
    budget: Option<f64>,
    #[serde(default)]
    budgets: Option<Vec<f64>>,
    #[serde(default)]
    providers: Option<Vec<String>>,
    #[serde(default)]
    sla: Vec<String>,
    #[serde(default)]
    epsilon: Option<f64>,
    #[serde(default)]
    rho: Option<f64>,
    #[serde(default)]
    max_vms: Option<f64>,
    #[serde(default)]
    latency_target: Option<f64>,
    #[serde(default)]
    throughput_target: Option<f64>,
}

impl SearchRequest {
    fn args(&self, app: &App, budget: f64) -> std::result::Result<SearchArgs, ApiError> {
        let max_vms = match self.max_vms {
            None => 32,
            Some(x) if x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x <= 1024.0 => x as u32,
            Some(x) => {
                return Err(ApiError::bad(
                    "max_vms",
                    format!("--max-vms must be a whole number from 1 to 1024, got {x}"),
                ))
            }
        };
        Ok(SearchArgs {
            budget,
            workload: match &self.workload {
                Value::String(s) => s.clone(),
                _ => "workload.json".into(),
            },
            providers: self.providers.as_ref().map(|p| p.join(",")),
            sla: self.sla.join(","),
            entries: None,
            key_bytes: None,
            value_bytes: None,
            epsilon: self.epsilon.unwrap_or(0.1),
            rho: self.rho,
            catalog: app.catalog.clone(),
            max_vms,
            phi: app.phi.clone(),
            design_out: None,
            rocksdb_options_out: None,
            deployment_out: None,
            plot: None,
            latency_target: self.latency_target,
            throughput_target: self.throughput_target,
            json: true,
            throughput: "physical".into(),
            max_recovery: 60.0,
            in_flight: None,
            volume_latency_us: None,
            os_reserve: None,
            cpu: None,
        })
    }
}

impl App {
    /// The search for `args` (with `workload`), from the cache when only the budget moved.
    fn searched(&self, args: &SearchArgs, workload: Workload) -> Result<(Arc<Done>, bool)> {
        let prepared = search_args::prepare(args, Some(workload))?;
        let o = &prepared.opts;
        // everything the result depends on; the budget only through the cost range
        let key = format!(
            "{}|{:?}|{:?}|{}|{:?}|{}|{:?}|{}",
            serde_json::to_string(&prepared.workload)?,
            o.providers,
            o.slas,
            o.epsilon,
            o.rho,
            o.max_vms,
            o.cost_range,
            prepared.catalog.name,
        );
        if let Some(done) = self
            .lock()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|e| e.1.clone())
        {
            return Ok((done, true));
        }
        let t = std::time::Instant::now();
        let result = search(
            &prepared.catalog,
            &prepared.workload,
            &prepared.phi,
            &prepared.opts,
        );
        let done = Arc::new(Done {
            prepared,
            result,
            seconds: t.elapsed().as_secs_f64(),
        });
        let mut cache = self.lock();
        cache.push_front((key, done.clone()));
        cache.truncate(CACHED_SEARCHES);
        Ok((done, false))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, Arc<Done>)>> {
        // a panic mid-insert leaves a complete queue behind
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs CPU-bound work off the server's threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, ApiError> + Send + 'static,
) -> std::result::Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|_| ApiError {
        field: "",
        message: "the search failed unexpectedly".into(),
        status: StatusCode::INTERNAL_SERVER_ERROR,
    })?
}

async fn api_search(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let req: SearchRequest = parse(&body)?;
    let budget = req
        .budget
        .ok_or_else(|| ApiError::bad("budget", "--budget is required"))?;
    let workload = workload_of(&req.workload)?;
    let args = req.args(&app, budget)?;
    let started = std::time::Instant::now();
    blocking(move || {
        let (done, cached) = app.searched(&args, workload).map_err(ApiError::from_cli)?;
        let r = &done.result;
        let mut v = search_args::search_json(&args, &done.prepared, r, done.seconds);
        v["search"]["cached"] = json!(cached);
        v["search"]["answered_in_seconds"] = json!(started.elapsed().as_secs_f64());
        v["workload_spec"] = serde_json::to_value(&done.prepared.workload).unwrap_or(Value::Null);
        v["per_provider"] = json!(r
            .per_provider
            .iter()
            .map(|(p, f)| json!({"provider": p, "frontier": f}))
            .collect::<Vec<_>>());
        v["baseline_frontiers"] = json!(r
            .baselines
            .iter()
            .map(|(b, f)| json!({"system": b.name(), "frontier": f}))
            .collect::<Vec<_>>());
        Ok(Json(v))
    })
    .await
}

async fn api_compare(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let req: SearchRequest = parse(&body)?;
    let budgets = req
        .budgets
        .clone()
        .unwrap_or_else(|| vec![1000.0, 5000.0, 20000.0, 50000.0]);
    if budgets.is_empty() {
        return Err(ApiError::bad("budgets", "--budgets names no budget"));
    }
    if let Some(b) = budgets.iter().find(|b| !(b.is_finite() && **b > 0.0)) {
        return Err(ApiError::bad(
            "budgets",
            format!("budgets must be positive, got {b}"),
        ));
    }
    let top = budgets.iter().cloned().fold(0.0, f64::max);
    let workload = workload_of(&req.workload)?;
    let args = req.args(&app, top)?;
    blocking(move || {
        let (done, _) = app
            .searched(&args, workload)
            .map_err(ApiError::from_cli)?;
        let r = &done.result;
        let rows: Vec<Value> = budgets
            .iter()
            .map(|&b| {
                let best = best_within(&r.frontier, b);
                let mut row = json!({
                    "budget": b,
                    "cosine": best.map(|c| json!({"throughput": c.throughput, "provider": c.provider, "vms": c.describe(), "class": c.parts[0].design.class, "monthly_usd": c.monthly_usd()})),
                });
                for (sys, f) in &r.baselines {
                    row[sys.name()] = json!(best_within(f, b).map(|c| c.throughput));
                }
                row
            })
            .collect();
        Ok(Json(json!({"workload": done.prepared.workload.name, "rows": rows})))
    })
    .await
}

/// The body of `/api/cost`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CostRequest {
    design: Value,
    workload: Value,
    #[serde(default)]
    entries: Option<f64>,
}

/// A request's whole-number field, checked as the command line checks its flag.
fn whole(field: &'static str, flag: &str, value: f64) -> Result<u64, ApiError> {
    search_args::positive_int(flag, Some(value))
        .map_err(|e| ApiError::bad(field, e))
        .map(|n| n.unwrap_or(1))
}

async fn api_cost(body: Bytes) -> ApiResult {
    let req: CostRequest = parse(&body)?;
    let design =
        Design::from_json(&req.design.to_string()).map_err(|e| ApiError::bad("design", e))?;
    let mut workload = workload_of(&req.workload)?;
    if let Some(n) = req.entries {
        workload.entries = whole("entries", "--entries", n)?;
    }
    let c = DistributionAware::default()
        .evaluate(&design, &workload)
        .map_err(|e| ApiError::bad("design", e))?;
    let mut v = serde_json::to_value(&c).map_err(|e| ApiError::bad("design", e))?;
    v["model"] = json!("distribution-aware");
    Ok(Json(v))
}

/// The body of `/api/workload`: a dropped file's text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRequest {
    name: String,
    text: String,
}

/// A dropped workload.json, or a YCSB property file (what `cosine bench --workload-file` reads) as the model
/// sees it.
async fn api_workload(body: Bytes) -> ApiResult {
    let req: FileRequest = parse(&body)?;
    let text = req.text.trim_start();
    let w = if text.starts_with('{') {
        Workload::from_json(text).map_err(|e| ApiError::bad("workload", e))?
    } else {
        let props = cosine_ycsb::parse_properties(text)
            .map_err(|e| ApiError::bad("workload", anyhow!("{}: {e}", req.name)))?;
        let mut core = cosine_ycsb::CoreWorkload::defaults(&req.name);
        core.apply(&props)
            .map_err(|e| ApiError::bad("workload", anyhow!("{}: {e}", req.name)))?;
        core.validate()
            .map_err(|e| ApiError::bad("workload", anyhow!("{}: {e}", req.name)))?;
        core.to_model()
    };
    Ok(Json(
        serde_json::to_value(&w).map_err(|e| ApiError::bad("workload", e))?,
    ))
}

async fn api_workloads() -> Json<Value> {
    let mut all = serde_json::Map::new();
    for name in workload_names() {
        if let Ok(w) = named_workload(&name) {
            all.insert(name, serde_json::to_value(&w).unwrap_or(Value::Null));
        }
    }
    Json(json!({"names": workload_names(), "workloads": all}))
}

/// One VM type of a configuration, as `/api/search` returns it (the fields a deployment needs).
#[derive(Debug, Deserialize)]
struct PartRequest {
    vm: String,
    count: u32,
    memory_gib: f64,
    /// What the search kept outside the design (absent from older clients).
    #[serde(default)]
    reserved_gib: Option<f64>,
    design: ScoredRequest,
}

#[derive(Debug, Deserialize)]
struct ScoredRequest {
    design: Value,
}

/// The body of `/api/deployment`: a configuration from the frontier.
#[derive(Debug, Deserialize)]
struct DeploymentRequest {
    provider: String,
    parts: Vec<PartRequest>,
}

async fn api_deployment(body: Bytes) -> ApiResult {
    let req: DeploymentRequest = parse(&body)?;
    let mut shards = Vec::new();
    for p in &req.parts {
        if !(p.memory_gib.is_finite() && p.memory_gib > 0.0) || p.count == 0 || p.count > 4096 {
            return Err(ApiError::bad(
                "configuration",
                "a part needs a VM count and its memory",
            ));
        }
        let design = Design::from_json(&p.design.design.to_string())
            .map_err(|e| ApiError::bad("design", e))?;
        for _ in 0..p.count {
            shards.push(cosine_design::ShardSpec {
                vm: p.vm.clone(),
                memory_bytes: (p.memory_gib * 1024.0 * 1024.0 * 1024.0) as u64,
                design: design.clone(),
                reserved_bytes: p
                    .reserved_gib
                    .filter(|r| r.is_finite() && *r >= 0.0)
                    .map(|r| (r * 1024.0 * 1024.0 * 1024.0) as u64),
            });
        }
    }
    let d = cosine_design::Deployment {
        provider: req.provider,
        shards,
    };
    Ok(Json(
        serde_json::to_value(&d).map_err(|e| ApiError::bad("configuration", e))?,
    ))
}

/// The body of `/api/rocksdb-options`: a design and the data it holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RocksDbRequest {
    design: Value,
    entries: f64,
    entry_bytes: f64,
    key_bytes: f64,
}

async fn api_rocksdb_options(body: Bytes) -> ApiResult {
    let req: RocksDbRequest = parse(&body)?;
    let design =
        Design::from_json(&req.design.to_string()).map_err(|e| ApiError::bad("design", e))?;
    let entries = whole("entries", "--entries", req.entries)?;
    let key_bytes = whole("key_bytes", "--key-bytes", req.key_bytes)?;
    let entry_bytes = whole("entry_bytes", "--entry-bytes", req.entry_bytes)?;
    let o = cosine_design::rocksdb::RocksDbOptions::for_design(
        &design,
        entries,
        entry_bytes,
        key_bytes,
    )
    .map_err(|e| ApiError::bad("design", e))?;
    Ok(Json(
        json!({ "options": o.options_file(), "notes": o.notes }),
    ))
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

/// The router, for the server and the tests.
fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/workloads", get(api_workloads))
        .route("/api/workload", post(api_workload))
        .route("/api/search", post(api_search))
        .route("/api/compare", post(api_compare))
        .route("/api/cost", post(api_cost))
        .route("/api/deployment", post(api_deployment))
        .route("/api/rocksdb-options", post(api_rocksdb_options))
        // a dropped file or a configuration: a few megabytes at most
        .layer(DefaultBodyLimit::max(4 << 20))
        .with_state(app)
}

/// Runs `cosine explore` until interrupted.
pub fn run(a: ExploreArgs) -> Result<()> {
    // the catalog and φ library load now, so a bad one is an error here rather than on every request
    cosine_cloud_pricing::load(&a.catalog)?;
    if let Some(p) = &a.phi {
        cosine_cost_model::cpu::PhiLibrary::named_or_file(p)?;
    }
    let app = Arc::new(App {
        catalog: a.catalog.clone(),
        phi: a.phi.clone(),
        cache: Mutex::new(VecDeque::new()),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&a.bind)
            .await
            .map_err(|e| anyhow!("cannot listen on {}: {e}", a.bind))?;
        let addr = listener.local_addr()?;
        println!("cosine explore: http://{addr}/ (Ctrl-C to stop)");
        use std::io::Write;
        std::io::stdout().flush()?;
        axum::serve(listener, router(app))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| anyhow!("the explorer's server failed: {e}"))
    })
}
