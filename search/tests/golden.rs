//! The search's answer, exactly, on a fixed set of searches, against `tests/golden/frontier.txt`: every
//! configuration of each frontier (ours and each fixed system's) with its cost, its latency and throughput to
//! the bit, and each VM's design. Moving code between files must leave it as it was; a change of the model or
//! the search shows here, and is re-stored on purpose with
//! `COSINE_BLESS=1 cargo test -p cosine-search --test golden`, its reason in the commit.

use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::named_workload;
use cosine_search::continuum::{search, Config, SearchOptions};
use std::fmt::Write as _;
use std::path::PathBuf;

fn line(out: &mut String, c: &Config) {
    write!(
        out,
        "  {} {} ${} latency={} throughput={}",
        c.provider,
        c.describe(),
        c.monthly_usd(),
        c.latency_s,
        c.throughput
    )
    .unwrap();
    for p in &c.parts {
        let d = &p.design;
        write!(
            out,
            " | {} entries={} iops={} {} io={} phi={} latency={} design={}",
            p.vm,
            p.entries_per_vm,
            p.iops,
            d.class,
            d.io_per_op,
            d.phi,
            d.latency_s,
            digest(&d.design.to_json())
        )
        .unwrap();
    }
    out.push('\n');
}

/// FNV-1a, 64 bits, of a design's JSON (the frontier's lines stay short).
fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn searched() -> String {
    let mut out = String::new();
    let phi = PhiLibrary::default();
    let all = ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"];
    for (catalog_name, catalog, names) in [
        ("paper", cosine_cloud_pricing::paper(), &all[..3]),
        (
            "current",
            cosine_cloud_pricing::load("current").unwrap(),
            &all[..],
        ),
    ] {
        for &name in names {
            let mut w = named_workload(name).unwrap();
            w.entries = 100_000_000;
            let mut opts = SearchOptions::new(5_000.0);
            opts.providers = vec![if catalog_name == "paper" {
                "aws".into()
            } else {
                "gcp".into()
            }];
            opts.max_vms = 4;
            // the paper's catalog priced as the paper prices it (its Eq. 3), today's within each machine's
            // physical limits
            if catalog_name == "paper" {
                opts.throughput = cosine_cost_model::machine::ThroughputModel::Paper;
            }
            let r = search(&catalog, &w, &phi, &opts);
            writeln!(out, "{catalog_name} {name} frontier").unwrap();
            for c in &r.frontier {
                line(&mut out, c);
            }
            for (system, frontier) in &r.baselines {
                writeln!(out, "{catalog_name} {name} {}", system.name()).unwrap();
                for c in frontier {
                    line(&mut out, c);
                }
            }
        }
    }
    out
}

fn stored() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/frontier.txt")
}

#[test]
fn the_search_answers_the_stored_searches_as_stored() {
    let now = searched();
    if std::env::var_os("COSINE_BLESS").is_some() {
        std::fs::create_dir_all(stored().parent().unwrap()).unwrap();
        std::fs::write(stored(), &now).unwrap();
        return;
    }
    let before = std::fs::read_to_string(stored())
        .expect("tests/golden/frontier.txt: store it with COSINE_BLESS=1");
    let changed: Vec<String> = now
        .lines()
        .zip(before.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(6)
        .map(|(i, (a, b))| format!("line {}:\n  now    {a}\n  stored {b}", i + 1))
        .collect();
    assert!(
        changed.is_empty() && now.lines().count() == before.lines().count(),
        "the search answers differently ({} lines now, {} stored):\n{}",
        now.lines().count(),
        before.lines().count(),
        changed.join("\n")
    );
}
