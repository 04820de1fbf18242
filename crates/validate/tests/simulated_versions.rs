//! The planner's simulation under writes loads the data set's distinct keys and makes the versions a tiered
//! level keeps from the writes it replays: given the stored entries with those versions as well, it counted
//! them twice. Run for real and priced: development seed 4's random #21 (an LSM of T = 6, K = 4, Z = 2,
//! partial compaction) under YCSB-A, whose writes were priced 1.03 blocks against 2.20 measured (today's
//! harness, three loads), 2.21 now.

use cosine_design::Design;
use cosine_validate::{run_case, Case};

#[test]
fn a_tiered_levels_versions_are_made_once() {
    let d: Design = serde_json::from_str(
        r#"{"block_bytes":8192,"buffer_bytes":1363148,"cold_runs":2,"compaction":"partial",
            "fence_bytes":146801,"file_bytes":2097152,"file_picking":"choose_first","filter_bytes":587203,
            "filter_granularity":"block","full_compaction_levels":2,"hot_runs":4,"log":"hybrid",
            "merge_threshold":1.0,"run_strategy":"first","size_ratio":6,"threads":0}"#,
    )
    .unwrap();
    d.validate().unwrap();
    let case = Case::one_thread("seed 4 #21", d, "ycsb-a", 20_000, 5_000).unwrap();
    let row = run_case(&case, 0).unwrap();
    let write = &row["write"];
    // the merges move about two blocks a write
    assert!(write["measured"].as_f64().unwrap() > 1.6, "{row}");
    assert!(write["accuracy"].as_f64().unwrap() >= 0.85, "{row}");
}
