//! A what-if budget sweep: one search over the whole cost range, read at several budgets: what each extra
//! dollar buys, and when the best design changes class.
//!
//! `cargo run --release -p cosine-search --example budget_sweep`

use cosine_cost_model::cpu::PhiLibrary;
use cosine_design::named_workload;
use cosine_search::continuum::{best_within, search, SearchOptions};

fn main() {
    let w = named_workload("ycsb-b").expect("a named workload");
    let catalog = cosine_cloud_pricing::load("current").expect("the embedded catalog loads");
    let r = search(
        &catalog,
        &w,
        &PhiLibrary::default(),
        &SearchOptions::new(100_000.0),
    );
    println!(
        "{:>10}  {:>14}  {:<8} {:<34} class",
        "budget", "ops/s", "provider", "VMs"
    );
    let mut last_class = None;
    for budget in [
        2_000.0, 3_000.0, 5_000.0, 10_000.0, 20_000.0, 50_000.0, 100_000.0,
    ] {
        match best_within(&r.frontier, budget) {
            Some(c) => {
                let class = c.parts[0].design.class;
                let change = if last_class.is_some_and(|l| l != class) {
                    "  <- class changes"
                } else {
                    ""
                };
                println!(
                    "{:>10}  {:>14.0}  {:<8} {:<34} {}{}",
                    format!("${budget:.0}"),
                    c.throughput,
                    c.provider,
                    c.describe(),
                    class,
                    change
                );
                last_class = Some(class);
            }
            None => println!("{:>10}  nothing fits", format!("${budget:.0}")),
        }
    }
}
