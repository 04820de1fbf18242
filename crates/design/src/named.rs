//! Named workloads: YCSB's core workloads A–F and Endure's 15 expected workloads (Endure Table 2).
//!
//! YCSB mapping: "read" is a single-result lookup, "update" a blind update (YCSB rewrites a record without
//! reading it), "insert" an insert of a new key, "read-modify-write" an rmw, "scan" a scan of 50 entries (the mean
//! of YCSB-E's uniform 1..100). YCSB's zipfian request distribution (θ = 0.99, scrambled over the records) is
//! `KeyDistribution::Zipfian { theta: 0.99 }` over the entry count; the cost model bins it into decades of rank,
//! each a partition of Cosine's skew model (k-partition skew), so the hottest ranks form small partitions that
//! receive most of the operations. YCSB-D's "latest" is Zipfian over recency, and YCSB-D/E inserts are new keys
//! (uniform over an unbounded universe). Records are Cosine Section 7's 1 KiB (128-byte keys, 896-byte
//! values); there are 10^10 of them (10 TB), the scale of the paper's budget experiments (1 to 100 billion
//! entries), where a $20,000/month budget cannot keep the data in memory and the engine design matters.
//! `--entries` changes it.
//!
//! Endure mapping: (z0, z1, q, w) = (empty lookups, single-result lookups, range scans, writes as inserts), over
//! Endure's model-evaluation data: 10^7 entries of 1 KiB, short ranges.

use crate::error::{DesignError, Result};
use crate::workload::{KeyDistribution, OperationMix, Workload};

/// YCSB's zipfian constant.
pub const YCSB_ZIPF_THETA: f64 = 0.99;

/// Every name `named_workload` knows, in order.
pub fn workload_names() -> Vec<String> {
    let mut v: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|c| format!("ycsb-{c}"))
        .collect();
    v.extend((0..15).map(|i| format!("endure-w{i}")));
    v
}

/// Endure Table 2: the 15 expected workloads as (z0, z1, q, w).
pub const ENDURE_EXPECTED: [[f64; 4]; 15] = [
    [0.25, 0.25, 0.25, 0.25],
    [0.97, 0.01, 0.01, 0.01],
    [0.01, 0.97, 0.01, 0.01],
    [0.01, 0.01, 0.97, 0.01],
    [0.01, 0.01, 0.01, 0.97],
    [0.49, 0.49, 0.01, 0.01],
    [0.49, 0.01, 0.49, 0.01],
    [0.49, 0.01, 0.01, 0.49],
    [0.01, 0.49, 0.49, 0.01],
    [0.01, 0.49, 0.01, 0.49],
    [0.01, 0.01, 0.49, 0.49],
    [0.33, 0.33, 0.33, 0.01],
    [0.33, 0.33, 0.01, 0.33],
    [0.33, 0.01, 0.33, 0.33],
    [0.01, 0.33, 0.33, 0.33],
];

/// A workload from Endure's (z0, z1, q, w) vector over Endure's data (10^7 entries of 1 KiB).
pub fn endure_workload(v: [f64; 4]) -> Workload {
    let mut w = Workload::with_mix(OperationMix {
        empty_lookup: v[0],
        lookup: v[1],
        scan: v[2],
        insert: v[3],
        ..Default::default()
    });
    w.scan_length = 1;
    w
}

/// Looks a workload up by name: `ycsb-a` … `ycsb-f`, `endure-w0` … `endure-w14` (case-insensitive).
pub fn named_workload(name: &str) -> Result<Workload> {
    let lower = name.trim().to_ascii_lowercase();
    if let Some(i) = lower
        .strip_prefix("endure-w")
        .and_then(|s| s.parse::<usize>().ok())
    {
        if i < ENDURE_EXPECTED.len() && lower == format!("endure-w{i}") {
            let mut w = endure_workload(ENDURE_EXPECTED[i]);
            w.name = Some(lower);
            return Ok(w);
        }
    }
    let zipf = KeyDistribution::Zipfian {
        theta: YCSB_ZIPF_THETA,
        universe: None,
        items: None,
    };
    let latest = KeyDistribution::Latest {
        theta: YCSB_ZIPF_THETA,
    };
    let new_keys = KeyDistribution::uniform();
    let (mix, reads, writes, scan_length) = match lower.as_str() {
        "ycsb-a" => (
            OperationMix {
                lookup: 0.5,
                blind_update: 0.5,
                ..Default::default()
            },
            zipf.clone(),
            zipf,
            50,
        ),
        "ycsb-b" => (
            OperationMix {
                lookup: 0.95,
                blind_update: 0.05,
                ..Default::default()
            },
            zipf.clone(),
            zipf,
            50,
        ),
        "ycsb-c" => (
            OperationMix {
                lookup: 1.0,
                ..Default::default()
            },
            zipf.clone(),
            zipf,
            50,
        ),
        "ycsb-d" => (
            OperationMix {
                lookup: 0.95,
                insert: 0.05,
                ..Default::default()
            },
            latest,
            new_keys,
            50,
        ),
        "ycsb-e" => (
            OperationMix {
                scan: 0.95,
                insert: 0.05,
                ..Default::default()
            },
            zipf,
            new_keys,
            50,
        ),
        "ycsb-f" => (
            OperationMix {
                lookup: 0.5,
                rmw: 0.5,
                ..Default::default()
            },
            zipf.clone(),
            zipf,
            50,
        ),
        _ => return Err(DesignError::UnknownWorkload(name.to_string())),
    };
    Ok(Workload {
        name: Some(lower),
        mix,
        scan_length,
        reads,
        writes,
        entries: 10_000_000_000,
        key_bytes: 128,
        value_bytes: 896,
        operations: 10_000_000,
        operations_before: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_loads_and_validates() {
        for n in workload_names() {
            let w = named_workload(&n).unwrap();
            w.validate().unwrap();
            assert_eq!(w.name.as_deref(), Some(n.as_str()));
        }
        assert_eq!(workload_names().len(), 21);
    }

    #[test]
    fn endure_table_rows_sum_to_one() {
        for row in ENDURE_EXPECTED {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let w11 = named_workload("endure-w11").unwrap();
        assert_eq!(w11.mix.insert, 0.01);
        assert_eq!(w11.mix.scan, 0.33);
    }

    #[test]
    fn unknown_names() {
        for n in ["ycsb-g", "endure-w15", "endure-w01", "", "tpcc"] {
            assert!(
                matches!(named_workload(n), Err(DesignError::UnknownWorkload(_))),
                "{n}"
            );
        }
        assert!(named_workload("YCSB-A").is_ok());
    }
}
