//! `cosine explore`: the JSON API over HTTP, and the page driven in headless Chromium (skipped, with the reason,
//! where chromedriver is missing; CI installs it, so there a missing one fails).

mod common;

use common::{free_port, Proc};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running `cosine explore` on a free port, over the paper's small catalog, and its URL.
fn explorer() -> (Proc, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args(["explore", "--bind", "127.0.0.1:0", "--catalog", "paper"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .trim_end_matches('/')
        .to_string();
    (Proc(child), url)
}

/// POSTs `body` and returns the status and the JSON answer.
fn post(url: &str, path: &str, body: &Value) -> (u16, Value) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut r = agent.post(format!("{url}{path}")).send_json(body).unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_json().unwrap())
}

/// A small search: the paper's AWS types, at most 8 VMs.
fn small(workload: Value, budget: f64) -> Value {
    json!({"workload": workload, "budget": budget, "providers": ["aws"], "max_vms": 8})
}

#[test]
fn the_api_answers_searches_from_its_cache_and_names_the_field_of_each_error() {
    let (_server, url) = explorer();
    let page = ureq::get(&url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(page.contains("Cosine explore") && page.contains("/api/search"));

    let (status, a) = post(&url, "/api/search", &small(json!("ycsb-c"), 3000.0));
    assert_eq!(status, 200, "{a}");
    assert_eq!(a["search"]["cached"], json!(false));
    let best = &a["best"];
    assert!(best["cost"]["total_usd"].as_f64().unwrap() <= 3000.0);
    assert!(!a["frontier"].as_array().unwrap().is_empty());
    assert_eq!(a["per_provider"][0]["provider"], json!("aws"));
    assert_eq!(a["baseline_frontiers"].as_array().unwrap().len(), 3);
    // the same search at another budget: read from the cache, and what `cosine search --json` says there
    let (_, b) = post(&url, "/api/search", &small(json!("ycsb-c"), 800.0));
    assert_eq!(b["search"]["cached"], json!(true));
    let cli = Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args([
            "search",
            "--budget",
            "800",
            "--workload",
            "ycsb-c",
            "--catalog",
            "paper",
            "--providers",
            "aws",
            "--max-vms",
            "8",
            "--json",
        ])
        .output()
        .unwrap();
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(b["best"], cli["best"]);
    assert_eq!(b["baselines"], cli["baselines"]);

    // errors: the command line's message, with the field
    for (body, field, text) in [
        (
            small(json!("ycsb-c"), -5.0),
            "budget",
            "--budget must be a positive number",
        ),
        (
            small(json!("ycsb-z"), 500.0),
            "workload",
            "unknown workload 'ycsb-z'",
        ),
        (
            small(json!({"mix": {"lookup": 0.7, "insert": 0.2}}), 500.0),
            "workload",
            "sum to",
        ),
        (
            json!({"workload": "ycsb-a", "budget": 500, "providers": ["ibm"]}),
            "providers",
            "unknown provider 'ibm'",
        ),
        (
            json!({"workload": "ycsb-a", "budget": 500, "max_vms": 0}),
            "max_vms",
            "--max-vms",
        ),
        (json!({"budget": 500}), "request", "malformed request"),
    ] {
        let (status, e) = post(&url, "/api/search", &body);
        assert_eq!(status, 400, "{body}: {e}");
        assert_eq!(e["field"], json!(field), "{body}: {e}");
        assert!(e["error"].as_str().unwrap().contains(text), "{body}: {e}");
    }

    // the named workloads, a dropped YCSB property file, a design's levels, a deployment
    let w: Value = ureq::get(format!("{url}/api/workloads"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(w["workloads"]["ycsb-a"]["mix"]["blind_update"], json!(0.5));
    let (status, props) = post(
        &url,
        "/api/workload",
        &json!({"name": "w.properties", "text": "recordcount=1000\noperationcount=100\nreadproportion=0.9\nupdateproportion=0.1\n"}),
    );
    assert_eq!(status, 200, "{props}");
    assert_eq!(
        (props["entries"].clone(), props["mix"]["lookup"].clone()),
        (json!(1000), json!(0.9))
    );
    let (status, bad) = post(
        &url,
        "/api/workload",
        &json!({"name": "w.properties", "text": "readproportion=2\n"}),
    );
    assert_eq!(
        (status, bad["field"].clone()),
        (400, json!("workload")),
        "{bad}"
    );
    let design = &best["parts"][0]["design"]["design"];
    let (status, cost) = post(
        &url,
        "/api/cost",
        &json!({"design": design, "workload": "ycsb-c"}),
    );
    assert_eq!(status, 200, "{cost}");
    assert!(cost["levels"].as_u64().is_some());
    let (status, d) = post(&url, "/api/deployment", best);
    assert_eq!(status, 200, "{d}");
    let vms: u64 = best["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["count"].as_u64().unwrap())
        .sum();
    assert_eq!(d["shards"].as_array().unwrap().len() as u64, vms);
    // the chosen design as a RocksDB OPTIONS file: an LSM design's text, a B-tree's one-line refusal
    let lsm: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/design-lsm.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let (status, o) = post(
        &url,
        "/api/rocksdb-options",
        &json!({"design": lsm, "entries": 100_000_000, "entry_bytes": 1024, "key_bytes": 16}),
    );
    assert_eq!(status, 200, "{o}");
    assert!(o["options"]
        .as_str()
        .unwrap()
        .contains("compaction_style=kCompactionStyleLevel"));
    assert!(!o["notes"].as_array().unwrap().is_empty());
    let mut btree = lsm.clone();
    btree["filter_bytes"] = json!(0);
    btree["class"] = json!("btree");
    let (status, e) = post(
        &url,
        "/api/rocksdb-options",
        &json!({"design": btree, "entries": 1000, "entry_bytes": 1024, "key_bytes": 16}),
    );
    assert_eq!((status, e["field"].as_str()), (400, Some("design")), "{e}");
    assert!(e["error"]
        .as_str()
        .unwrap()
        .contains("no RocksDB equivalent"));
    let (status, e) = post(
        &url,
        "/api/rocksdb-options",
        &json!({"design": lsm, "entries": 0, "entry_bytes": 1024, "key_bytes": 16}),
    );
    assert_eq!((status, e["field"].as_str()), (400, Some("entries")), "{e}");
    let (status, c) = post(
        &url,
        "/api/compare",
        &json!({"workload": "ycsb-c", "budgets": [800, 3000], "providers": ["aws"], "max_vms": 8}),
    );
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["rows"].as_array().unwrap().len(), 2);
}

/// chromedriver on a free port, or why not.
fn chromedriver() -> Option<(Proc, u16)> {
    let found = Command::new("chromedriver")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have chromedriver installed (Debian packages chromium and chromium-driver)"
        );
        eprintln!("chromedriver is not installed (Debian packages chromium, chromium-driver): skipping the browser test");
        return None;
    }
    let port = free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((Proc(child), port))
}

/// Runs `script` in the page and returns its value.
async fn js(c: &fantoccini::Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

/// Waits until `script` returns true.
async fn until(c: &fantoccini::Client, script: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if js(c, script).await == json!(true) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sets an input's value as typing does (an input event), and waits for the search it starts to answer.
async fn set(c: &fantoccini::Client, id: &str, value: &str) {
    let before = js(c, "return window.answers").await.as_u64().unwrap();
    js(
        c,
        &format!(
            "const e = document.getElementById('{id}'); e.value = '{value}'; \
             e.dispatchEvent(new Event('input', {{bubbles: true}})); return true"
        ),
    )
    .await;
    until(
        c,
        &format!("return window.answers > {before}"),
        "the search to answer",
    )
    .await;
}

#[test]
fn the_page_follows_the_budget_and_the_workload_in_a_real_browser() {
    let Some((_driver, port)) = chromedriver() else {
        return;
    };
    let (_server, url) = explorer();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1100"]}),
        );
        let c = fantoccini::ClientBuilder::rustls()
            .unwrap()
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a WebDriver session");
        c.goto(&format!("{url}/?workload=ycsb-c&budget=3000&providers=aws&max_vms=8"))
            .await
            .unwrap();
        until(&c, "return window.answers > 0", "the first search").await;
        let text = |id: &'static str| {
            let c = &c;
            async move {
                js(c, &format!("return document.getElementById('{id}').textContent")).await
            }
        };
        // the frontier is drawn, with the chosen point ringed
        assert_eq!(
            js(&c, "return document.querySelectorAll('#frontier .pt').length > 3").await,
            json!(true)
        );
        assert_eq!(js(&c, "return !!document.getElementById('ring-chosen')").await, json!(true));
        let first = text("chosen").await;
        // the RocksDB OPTIONS download: a design RocksDB cannot run is refused beside the request
        let class = js(&c, "return last.best.parts[0].design.class").await;
        js(&c, "document.getElementById('dl-rocksdb').click(); return true").await;
        if class == json!("lsm") {
            until(&c, "return window.downloaded === 'OPTIONS'", "the OPTIONS file").await;
        } else {
            until(
                &c,
                "return document.getElementById('err-request').textContent.includes('no RocksDB equivalent')",
                "the OPTIONS refusal",
            )
            .await;
        }
        // less money: another configuration
        set(&c, "budget", "1500").await;
        let cheaper = text("chosen").await;
        assert_ne!(first, cheaper, "the chosen configuration did not move with the budget");
        let monthly = js(&c, "return last.best && last.best.cost.total_usd").await;
        assert!(monthly.as_f64().is_some_and(|m| m <= 1500.0), "{monthly}");
        // a write-heavy mix: another design
        set(&c, "share-lookup", "0.1").await;
        set(&c, "share-insert", "0.9").await;
        until(
            &c,
            "return document.getElementById('err-workload').textContent === ''",
            "a valid mix",
        )
        .await;
        let writes = text("chosen").await;
        assert_ne!(cheaper, writes, "the chosen design did not move with the workload");
        // an invalid mix: the command line's message beside the mix, the shares marked
        set(&c, "share-lookup", "0.6").await;
        let err = text("err-workload").await;
        assert!(err.as_str().is_some_and(|e| e.contains("sum to")), "{err}");
        assert_eq!(
            js(&c, "return document.getElementById('share-lookup').classList.contains('invalid')").await,
            json!(true)
        );
        // and a bad budget beside the budget
        set(&c, "share-lookup", "0.1").await;
        set(&c, "budget", "-3").await;
        let err = text("err-budget").await;
        assert!(
            err.as_str().is_some_and(|e| e.contains("--budget must be a positive number")),
            "{err}"
        );
        c.close().await.unwrap();
    });
}

#[test]
fn bad_flags_are_one_line_and_exit_code_2() {
    for args in [
        &["explore", "--bind", "nonsense"][..],
        &["explore", "--catalog", "no-such-catalog.json"],
        &["explore", "--phi", "no-such-phi.json"],
    ] {
        let out = common::cosine(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}
