//! `cosine adversary --quick`: the adversarial client suite, short. The server must stay up, keep its data,
//! answer every PING and stay within its memory bound; the latencies are reported, not asserted (the full run
//! and its figures are in BENCHMARKS.md).

use std::process::Command;

#[test]
fn the_server_survives_the_adversarial_suite() {
    let out = Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args(["adversary", "--quick", "--json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(o["server_up"], true, "{o}");
    assert_eq!(o["data_intact"], true, "{o}");
    assert_eq!(o["ping_errors"], 0, "{o}");
    assert!(o["pings"].as_u64().unwrap() > 0, "{o}");
    // the attackers and the flood connected, and the server turned away the flood's connections past its
    // limit (256, the attackers' and the good client's included)
    assert!(o["attacker_connections"].as_u64().unwrap() >= 256, "{o}");
    assert!(o["flood_refused"].as_u64().unwrap() >= 1, "{o}");
    assert!(
        o["resident_peak_bytes"].as_u64().unwrap() <= o["rss_bound_bytes"].as_u64().unwrap(),
        "{o}"
    );
}
