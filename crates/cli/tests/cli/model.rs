//! `cosine tune`, `cosine uncertainty`, `cosine cost` and `cosine workloads`: the model's commands print the
//! fields and classes the README documents.

use super::*;

#[test]
fn tune_json_has_the_documented_fields() {
    let v = json(&cosine(&[
        "tune",
        "--workload",
        "0.25,0.25,0.25,0.25",
        "--json",
    ]));
    for k in [
        "policy",
        "size_ratio",
        "bits_per_entry",
        "buffer_bits",
        "cost",
        "worst_case_cost",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    for k in ["z0", "z1", "q", "w"] {
        assert!(v["costs"][k].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(v["cost"], v["worst_case_cost"]);
    let t = v["size_ratio"].as_f64().unwrap();
    assert!((2.0..=100.0).contains(&t));
}

#[test]
fn robust_tuning_reports_a_larger_worst_case() {
    let v = json(&cosine(&[
        "tune",
        "--workload",
        "endure-w11",
        "--rho",
        "0.5",
        "--json",
        "--model",
        "endure-code",
    ]));
    assert!(v["worst_case_cost"].as_f64().unwrap() > v["cost"].as_f64().unwrap());
    let out = cosine(&["tune", "--workload", "endure-w11", "--rho", "0.5"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("worst case in KL ball"), "{text}");
    assert!(text.contains("size ratio T"));
}

#[test]
fn uncertainty_json() {
    let v = json(&cosine(&[
        "uncertainty",
        "--expected",
        "endure-w1",
        "--rho",
        "1",
        "--samples",
        "500",
        "--seed",
        "3",
        "--json",
    ]));
    assert_eq!(v["samples"], 500);
    let d = &v["delta_throughput"];
    assert!(d["q1"].as_f64().unwrap() <= d["median"].as_f64().unwrap());
    assert!(d["median"].as_f64().unwrap() <= d["q3"].as_f64().unwrap());
    assert!(v["throughput_range"]["robust"].as_f64().unwrap() >= 0.0);
}

#[test]
fn cost_json_has_the_documented_fields() {
    for design in [
        "design-lsm.json",
        "design-btree.json",
        "design-lsh.json",
        "design-hybrid.json",
    ] {
        for model in ["distribution-aware", "worst-case"] {
            let v = json(&cosine(&[
                "cost",
                "--design",
                &example(design),
                "--workload",
                "ycsb-a",
                "--model",
                model,
                "--json",
            ]));
            for k in ["levels", "cold_levels", "fpr_sum", "total"] {
                assert!(v.get(k).is_some(), "{design}: missing {k}");
            }
            for k in [
                "lookup",
                "empty_lookup",
                "insert",
                "blind_update",
                "rmw",
                "long_scan",
                "short_scan",
            ] {
                let x = v["per_op"][k].as_f64().unwrap();
                assert!(x.is_finite() && x >= 0.0, "{design} {model} {k} = {x}");
            }
        }
    }
    let q = json(&cosine(&[
        "cost",
        "--design",
        &example("design-lsm.json"),
        "--workload",
        &example("workload-skewed-writes.json"),
        "--quirks",
        "reference",
        "--json",
    ]));
    assert_eq!(q["quirks"], true);
}

#[test]
fn cost_classes_follow_algorithm_3() {
    for (design, class) in [
        ("design-lsm.json", "lsm"),
        ("design-btree.json", "btree"),
        ("design-lsh.json", "lsh"),
        ("design-hybrid.json", "hybrid"),
    ] {
        let v = json(&cosine(&[
            "cost",
            "--design",
            &example(design),
            "--workload",
            "ycsb-c",
            "--entries",
            "100000000",
            "--json",
        ]));
        assert_eq!(v["class"], class, "{design}");
    }
}

#[test]
fn workloads_lists_every_name() {
    let out = cosine(&["workloads"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert_eq!(text.lines().count(), 21);
    assert!(text.contains("ycsb-e") && text.contains("endure-w14"));
}
