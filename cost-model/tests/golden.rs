//! The model's values, bit for bit, over a fixed set of designs × workloads × model settings, against the
//! values stored in `tests/golden/model.txt`. A change of layout (moving the model's code between files) must
//! leave every value as it was; a change of the model shows here as the cases it moves, and is re-stored on
//! purpose with `COSINE_BLESS=1 cargo test -p cosine-cost-model --test golden`, its reason in the commit.
//!
//! The set: preset and random valid designs (every class, compaction, run strategy, file picking, merge
//! threshold, entry cache, hybrid and append-only logs) at three memory sizes, on YCSB A-F and skewed,
//! partitioned, read-only and long-running workloads at three scales; priced by the fixed model, the
//! reference code's arithmetic, FASTER's LSH engine, and each reference quirk alone.

use cosine_cost_model::{DistributionAware, IoCost, IoModel, ReferenceQuirks};
use cosine_design::{
    named_workload, Compaction, Design, DesignClass, FilePicking, FilterGranularity,
    KeyDistribution, LogKind, OperationMix, Partition, RunStrategy, Workload,
};
use std::path::PathBuf;

/// A small deterministic generator (xorshift64*): the set must not change with a dependency's version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    fn pick<T: Copy>(&mut self, of: &[T]) -> T {
        of[self.range(0, of.len() as u64) as usize]
    }
}

fn random_design(rng: &mut Rng, memory: u64) -> Design {
    let block_bytes = rng.pick(&[4096, 8192, 16384, 32768]);
    let buffer = memory * rng.range(10, 80) / 100;
    if rng.range(0, 5) == 0 {
        let mut d = Design::lsh_like(buffer, memory - buffer);
        d.size_ratio = rng.pick(&[64, 256, 1000, 4096]);
        d.hot_runs = d.size_ratio - 1;
        d.cold_runs = rng.pick(&[1, 2, d.size_ratio - 1]);
        d.block_bytes = block_bytes;
        d.log = rng.pick(&[LogKind::Hybrid, LogKind::AppendOnly]);
        d.compaction = rng.pick(&[Compaction::Full, Compaction::Partial]);
        d.mutable_fraction = rng.pick(&[0.5, 0.25, 0.1]);
        d.class = Some(DesignClass::Lsh);
        return d;
    }
    let t = rng.range(2, 33);
    let k = rng.range(1, t);
    let z = rng.range(1, t);
    let rest = memory - buffer;
    let cache = if rng.range(0, 4) == 0 {
        rest * rng.range(10, 50) / 100
    } else {
        0
    };
    let rest = rest - cache;
    let filters = if rng.range(0, 4) == 0 {
        0
    } else {
        rest * rng.range(5, 95) / 100
    };
    let mut d = Design::rocksdb_like(buffer, filters, rest - filters);
    (d.size_ratio, d.hot_runs, d.cold_runs) = (t, k, z);
    d.cache_bytes = cache;
    d.block_bytes = block_bytes;
    d.file_bytes = rng.pick(&[1 << 20, 2 << 20, 4 << 20, 64 << 20]);
    d.compaction = rng.pick(&[Compaction::Full, Compaction::Partial, Compaction::Hybrid]);
    d.full_compaction_levels = rng.range(1, 4) as u32;
    d.run_strategy = rng.pick(&[
        RunStrategy::First,
        RunStrategy::LastFull,
        RunStrategy::Fullest,
        RunStrategy::None,
    ]);
    d.file_picking = rng.pick(&[
        FilePicking::Oldest,
        FilePicking::DenseFp,
        FilePicking::SparseFp,
        FilePicking::ChooseFirst,
    ]);
    d.filter_granularity = rng.pick(&[
        FilterGranularity::File,
        FilterGranularity::Block,
        FilterGranularity::Run,
    ]);
    d.merge_threshold = rng.pick(&[0.5, 0.75, 1.0]);
    d.class = None;
    d
}

fn designs() -> Vec<(String, Design)> {
    let mut out = Vec::new();
    for (m, memory) in [("1MiB", 1u64 << 20), ("32MiB", 32 << 20), ("4GiB", 4 << 30)] {
        let q = memory / 4;
        let presets = [
            ("rocksdb", Design::rocksdb_like(q, q, 2 * q)),
            ("lsh", Design::lsh_like(2 * q, 2 * q)),
            ("hybrid", Design::hybrid(8, q, q / 2, q / 4)),
            ("wiredtiger", Design::wiredtiger_like(2 * q, q)),
            ("tiered", Design::tiered(6, q, q, q)),
        ];
        for (name, d) in presets {
            out.push((format!("{name}-{m}"), d));
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ memory);
        let mut n = 0;
        while n < 24 {
            let d = random_design(&mut rng, memory);
            if d.validate().is_ok() {
                out.push((format!("random{n}-{m}"), d));
                n += 1;
            }
        }
    }
    out
}

fn workloads() -> Vec<(String, Workload)> {
    let mut out = Vec::new();
    for (scale, entries, ops) in [
        ("60k", 60_000u64, 60_000u64),
        ("10M", 10_000_000, 10_000_000),
        ("1G", 1_000_000_000, 100_000_000),
    ] {
        for name in ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"] {
            let mut w = named_workload(name).unwrap();
            w.entries = entries;
            w.operations = ops;
            out.push((format!("{name}-{scale}"), w));
        }
    }
    let mut skew = Workload::with_mix(OperationMix {
        lookup: 0.4,
        empty_lookup: 0.1,
        insert: 0.3,
        blind_update: 0.1,
        rmw: 0.05,
        scan: 0.05,
    });
    skew.reads = KeyDistribution::Skew {
        special_universe: 1_000,
        regular_universe: None,
        probability: 0.8,
    };
    skew.writes = KeyDistribution::Skew {
        special_universe: 5_000,
        regular_universe: None,
        probability: 0.6,
    };
    skew.entries = 200_000;
    skew.operations = 100_000;
    out.push(("skew-200k".into(), skew));
    let mut parts = Workload::with_mix(OperationMix {
        lookup: 0.3,
        insert: 0.2,
        blind_update: 0.4,
        scan: 0.1,
        ..Default::default()
    });
    let split = KeyDistribution::Partitioned {
        partitions: vec![
            Partition {
                universe: 100,
                probability: 0.5,
            },
            Partition {
                universe: 10_000,
                probability: 0.3,
            },
            Partition {
                universe: 1_000_000,
                probability: 0.2,
            },
        ],
    };
    parts.reads = split.clone();
    parts.writes = split;
    parts.entries = 100_000;
    parts.operations = 100_000;
    parts.scan_length = 2_000;
    out.push(("partitioned-100k".into(), parts));
    let mut read_only = Workload::with_mix(OperationMix {
        lookup: 0.9,
        empty_lookup: 0.1,
        ..Default::default()
    });
    read_only.entries = 200_000;
    out.push(("uniform-read-only-200k".into(), read_only));
    let mut long = named_workload("ycsb-a").unwrap();
    long.entries = 100_000;
    long.operations = 50_000;
    long.operations_before = 2_000_000;
    out.push(("ycsb-a-after-2M-100k".into(), long));
    // the authors' default workload: half lookups, half inserts, uniform, 16 + 112 B
    let mut paper = Workload::with_mix(OperationMix {
        lookup: 0.5,
        insert: 0.5,
        ..Default::default()
    });
    paper.entries = 1_000_000_000_000;
    paper.key_bytes = 16;
    paper.value_bytes = 112;
    out.push(("paper-default-1T".into(), paper));
    out
}

/// One case's values as text: every field of the cost, each f64 in its shortest exact form.
fn shown(r: Result<IoCost, cosine_cost_model::ModelError>) -> String {
    match r {
        Err(e) => format!("error {e}"),
        Ok(c) => {
            let p = c.per_op;
            format!(
                "{} L={} Y={} R={} bf={} fp={} | {} {} {} {} {} {} {} | scan={} op={} total={}",
                c.class,
                c.levels,
                c.cold_levels,
                c.fpr_sum,
                c.filter_bytes,
                c.fence_bytes,
                p.lookup,
                p.empty_lookup,
                p.insert,
                p.blind_update,
                p.rmw,
                p.long_scan,
                p.short_scan,
                c.scan,
                c.per_operation,
                c.total
            )
        }
    }
}

/// FNV-1a over a case's text, 32 bits: the stored file keeps one per case (a change is caught with odds
/// 1 − 2^−32; the test prints the changed cases' values).
fn digest(text: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// A row of cases: one model setting on one workload over a list of designs, each (design, values).
type Row = (String, Vec<(String, String)>);

/// Every single quirk switched on alone, by its serde name.
fn single_quirks() -> Vec<(String, ReferenceQuirks)> {
    let none = serde_json::to_value(ReferenceQuirks::NONE).unwrap();
    let names: Vec<String> = none.as_object().unwrap().keys().cloned().collect();
    assert!(names.len() >= 30, "every quirk is a switch");
    names
        .into_iter()
        .map(|name| {
            let mut v = none.clone();
            v[&name] = serde_json::Value::Bool(true);
            (name, serde_json::from_value(v).unwrap())
        })
        .collect()
}

fn priced() -> Vec<Row> {
    let designs = designs();
    let workloads = workloads();
    let fixed = DistributionAware::new();
    let reference = DistributionAware::reference();
    let faster = DistributionAware {
        lsh_engine: cosine_cost_model::dist::LshEngine::Faster,
        ..DistributionAware::new()
    };
    let mut rows = Vec::new();
    for (wn, w) in &workloads {
        let row = |model: &DistributionAware, only_lsh: bool| -> Vec<(String, String)> {
            designs
                .iter()
                .filter(|(_, d)| !only_lsh || d.runs_as_lsh())
                .map(|(dn, d)| (dn.clone(), shown(model.evaluate(d, w))))
                .collect()
        };
        rows.push((format!("fixed {wn}"), row(&fixed, false)));
        rows.push((format!("reference {wn}"), row(&reference, false)));
        rows.push((format!("faster {wn}"), row(&faster, true)));
        let explained = designs
            .iter()
            .map(|(dn, d)| {
                let levels = match fixed.explain(d, w) {
                    Ok(Some(levels)) => levels
                        .iter()
                        .map(|l| {
                            format!(
                                "{}:{}:{}:{}:{}:{}",
                                l.level, l.hot, l.runs, l.entries_per_run, l.resident_runs, l.fpr
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    Ok(None) => "lsh".into(),
                    Err(e) => format!("error {e}"),
                };
                (dn.clone(), levels)
            })
            .collect();
        rows.push((format!("explain {wn}"), explained));
    }
    // each quirk alone, over a slice of the set (every class, the simulation's scale and the search's)
    let some: Vec<&(String, Design)> = designs.iter().step_by(5).collect();
    let few: Vec<&(String, Workload)> = workloads
        .iter()
        .filter(|(n, _)| {
            [
                "ycsb-a-60k",
                "ycsb-c-60k",
                "ycsb-d-10M",
                "ycsb-e-10M",
                "ycsb-f-1G",
                "skew-200k",
                "uniform-read-only-200k",
                "paper-default-1T",
            ]
            .contains(&n.as_str())
        })
        .collect();
    for (qn, quirks) in single_quirks() {
        let model = DistributionAware {
            quirks,
            ..DistributionAware::new()
        };
        for (wn, w) in &few {
            let row = some
                .iter()
                .map(|(dn, d)| (dn.clone(), shown(model.evaluate(d, w))))
                .collect();
            rows.push((format!("quirk:{qn} {wn}"), row));
        }
    }
    rows
}

fn stored() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/model.txt")
}

fn stored_text(rows: &[Row]) -> String {
    rows.iter()
        .map(|(key, cases)| {
            let digests: Vec<String> = cases.iter().map(|(_, v)| digest(v)).collect();
            format!("{key} {}\n", digests.join(" "))
        })
        .collect()
}

#[test]
fn the_model_prices_the_stored_set_as_stored() {
    let rows = priced();
    if std::env::var_os("COSINE_BLESS").is_some() {
        std::fs::create_dir_all(stored().parent().unwrap()).unwrap();
        std::fs::write(stored(), stored_text(&rows)).unwrap();
        return;
    }
    let before = std::fs::read_to_string(stored())
        .expect("tests/golden/model.txt: store it with COSINE_BLESS=1");
    let before: Vec<&str> = before.lines().collect();
    assert_eq!(
        rows.len(),
        before.len(),
        "the set has {} rows, {} stored",
        rows.len(),
        before.len()
    );
    let mut changed = Vec::new();
    let mut cases = 0;
    for ((key, row), line) in rows.iter().zip(&before) {
        let mut fields = line.split(' ');
        let stored_key: Vec<&str> = fields.by_ref().take(2).collect();
        assert_eq!(stored_key.join(" "), *key, "rows in the stored order");
        let digests: Vec<&str> = fields.collect();
        assert_eq!(digests.len(), row.len(), "{key}: cases in the row");
        for ((design, values), d) in row.iter().zip(&digests) {
            cases += 1;
            if digest(values) != *d {
                changed.push(format!("{key} {design}: now {values}"));
            }
        }
    }
    assert!(cases > 5_000, "the set holds every case");
    assert!(
        changed.is_empty(),
        "{} of {cases} cases price differently:\n{}",
        changed.len(),
        changed
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
