//! Searching from code: the best design, VMs and provider for a workload of your own and a budget.
//!
//! `cargo run --release -p cosine-search --example search_from_code`

use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::{KeyDistribution, OperationMix, Workload};
use cosine_search::continuum::{search, SearchOptions};

fn main() {
    // 2 billion 512-byte entries, 70% lookups of hot keys, 30% inserts
    let mut w = Workload::with_mix(OperationMix {
        lookup: 0.7,
        insert: 0.3,
        ..Default::default()
    });
    w.entries = 2_000_000_000;
    w.key_bytes = 24;
    w.value_bytes = 488;
    w.reads = KeyDistribution::Zipfian {
        theta: 0.9,
        universe: None,
        items: None,
    };
    let catalog = cosine_cloud_pricing::load("current").expect("the embedded catalog loads");
    let mut opts = SearchOptions::new(8_000.0);
    opts.providers = vec!["aws".into(), "azure".into()];
    let r = search(&catalog, &w, &PhiLibrary::default(), &opts);
    match r.best {
        Some(best) => {
            println!(
                "best for $8,000/month: {} {} at ${:.2}, {:.0} ops/s",
                best.provider,
                best.describe(),
                best.monthly_usd(),
                best.throughput
            );
            for p in &best.parts {
                println!(
                    "  {} runs a {} design: {}",
                    p.vm,
                    p.design.class,
                    p.design.design.to_json().replace('\n', " ")
                );
            }
        }
        None => println!("nothing fits $8,000/month"),
    }
    println!(
        "{} configurations scored, {} points on the frontier",
        r.counts.configurations,
        r.frontier.len()
    );
}
