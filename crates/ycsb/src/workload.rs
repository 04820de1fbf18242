//! YCSB's core workload, as YCSB's `CoreWorkload` defines it: properties (with YCSB's defaults), the six
//! standard workloads A-F, and YCSB's property-file format, so a user's existing `workloads/workloada` works.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// A property that does not parse.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("workload property {key}: {problem}")]
pub struct PropertyError {
    /// The property.
    pub key: String,
    /// What is wrong.
    pub problem: String,
}

/// How keys of requests are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Every record equally likely.
    Uniform,
    /// Zipfian with YCSB's constant, scrambled over the key space.
    Zipfian,
    /// Zipfian over recency: the newest records are the most popular.
    Latest,
}

/// YCSB's core workload parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoreWorkload {
    /// Name for reports.
    pub name: String,
    /// Records loaded.
    pub record_count: u64,
    /// Operations in the run phase.
    pub operation_count: u64,
    /// Fields per record.
    pub field_count: u32,
    /// Bytes per field.
    pub field_length: u32,
    /// Share of reads.
    pub read: f64,
    /// Share of updates.
    pub update: f64,
    /// Share of inserts.
    pub insert: f64,
    /// Share of scans.
    pub scan: f64,
    /// Share of read-modify-writes.
    pub read_modify_write: f64,
    /// Request distribution.
    pub distribution: Distribution,
    /// Zipfian constant (YCSB: 0.99).
    pub zipfian_constant: f64,
    /// Longest scan (uniform 1..=max).
    pub max_scan_length: u64,
    /// Keys are "user" + hash(n) (YCSB's default `insertorder=hashed`) rather than "user" + n.
    pub hashed_keys: bool,
    /// Records that earlier run phases on the same store inserted after the load (a warm-up): this run's
    /// inserts continue after them and its requests may target them. Not a YCSB property; 0 by default.
    pub inserted_before: u64,
    /// Records of the load already loaded by earlier load phases on the same store: a load phase loads the
    /// records from this one to `record_count` (a load in parts, with pauses between them). Not a YCSB
    /// property; 0 by default.
    #[serde(default)]
    pub loaded_before: u64,
}

impl CoreWorkload {
    /// YCSB's defaults (CoreWorkload's property defaults).
    pub fn defaults(name: &str) -> Self {
        CoreWorkload {
            name: name.into(),
            record_count: 1000,
            operation_count: 1000,
            field_count: 10,
            field_length: 100,
            read: 0.95,
            update: 0.05,
            insert: 0.0,
            scan: 0.0,
            read_modify_write: 0.0,
            distribution: Distribution::Uniform,
            zipfian_constant: 0.99,
            max_scan_length: 1000,
            hashed_keys: true,
            inserted_before: 0,
            loaded_before: 0,
        }
    }

    /// One of YCSB's six core workloads, `a` … `f` (or `ycsb-a` …), with its shipped property file's values.
    pub fn named(name: &str) -> Option<Self> {
        let n = name.trim().to_ascii_lowercase();
        let n = n
            .strip_prefix("ycsb-")
            .or_else(|| n.strip_prefix("workload"))
            .unwrap_or(&n)
            .to_string();
        let mut w = CoreWorkload::defaults(&format!("ycsb-{n}"));
        w.distribution = Distribution::Zipfian;
        let (read, update, insert, scan, rmw) = match n.as_str() {
            "a" => (0.5, 0.5, 0.0, 0.0, 0.0),
            "b" => (0.95, 0.05, 0.0, 0.0, 0.0),
            "c" => (1.0, 0.0, 0.0, 0.0, 0.0),
            "d" => {
                w.distribution = Distribution::Latest;
                (0.95, 0.0, 0.05, 0.0, 0.0)
            }
            "e" => {
                w.max_scan_length = 100;
                (0.0, 0.0, 0.05, 0.95, 0.0)
            }
            "f" => (0.5, 0.0, 0.0, 0.0, 0.5),
            _ => return None,
        };
        (w.read, w.update, w.insert, w.scan, w.read_modify_write) =
            (read, update, insert, scan, rmw);
        Some(w)
    }

    /// Bytes of one record's value.
    pub fn value_bytes(&self) -> usize {
        self.field_count as usize * self.field_length as usize
    }

    /// Whether the run never writes: no updates, inserts or read-modify-writes (YCSB-C).
    pub fn read_only(&self) -> bool {
        self.update + self.insert + self.read_modify_write == 0.0
    }

    /// Applies YCSB properties (`key=value` pairs) on top of this workload.
    pub fn apply(&mut self, props: &BTreeMap<String, String>) -> Result<(), PropertyError> {
        let num = |k: &str, v: &str| -> Result<f64, PropertyError> {
            v.trim().parse::<f64>().map_err(|_| PropertyError {
                key: k.into(),
                problem: format!("'{v}' is not a number"),
            })
        };
        for (k, v) in props {
            let v = v.trim();
            match k.as_str() {
                "recordcount" => self.record_count = num(k, v)? as u64,
                "operationcount" => self.operation_count = num(k, v)? as u64,
                "fieldcount" => self.field_count = num(k, v)? as u32,
                "fieldlength" => self.field_length = num(k, v)? as u32,
                "readproportion" => self.read = num(k, v)?,
                "updateproportion" => self.update = num(k, v)?,
                "insertproportion" => self.insert = num(k, v)?,
                "scanproportion" => self.scan = num(k, v)?,
                "readmodifywriteproportion" => self.read_modify_write = num(k, v)?,
                "zipfianconstant" => self.zipfian_constant = num(k, v)?,
                "maxscanlength" => self.max_scan_length = num(k, v)? as u64,
                "requestdistribution" => {
                    self.distribution = match v {
                        "uniform" => Distribution::Uniform,
                        "zipfian" => Distribution::Zipfian,
                        "latest" => Distribution::Latest,
                        other => {
                            return Err(PropertyError {
                                key: k.clone(),
                                problem: format!(
                                    "unsupported distribution '{other}' (uniform, zipfian, latest)"
                                ),
                            })
                        }
                    }
                }
                "insertorder" => self.hashed_keys = v != "ordered",
                // properties of other YCSB parts, kept so that shipped files load unchanged
                "workload"
                | "readallfields"
                | "writeallfields"
                | "scanlengthdistribution"
                | "fieldlengthdistribution"
                | "table"
                | "insertstart"
                | "insertcount"
                | "threadcount"
                | "measurementtype"
                | "hotspotdatafraction"
                | "hotspotopnfraction"
                | "exportfile"
                | "core_workload_insertion_retry_limit"
                | "dataintegrity" => {}
                other => {
                    return Err(PropertyError {
                        key: other.into(),
                        problem: "unknown property".into(),
                    })
                }
            }
        }
        self.validate()
    }

    /// Checks the mix and sizes.
    pub fn validate(&self) -> Result<(), PropertyError> {
        let shares = [
            self.read,
            self.update,
            self.insert,
            self.scan,
            self.read_modify_write,
        ];
        if shares.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(PropertyError {
                key: "*proportion".into(),
                problem: "proportions must be non-negative".into(),
            });
        }
        let sum: f64 = shares.iter().sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(PropertyError {
                key: "*proportion".into(),
                problem: format!("proportions sum to {sum}, not 1"),
            });
        }
        if self.record_count == 0 || self.field_count == 0 {
            return Err(PropertyError {
                key: "recordcount".into(),
                problem: "records and fields must be positive".into(),
            });
        }
        if self.scan > 0.0 && self.max_scan_length == 0 {
            return Err(PropertyError {
                key: "maxscanlength".into(),
                problem: "must be positive".into(),
            });
        }
        if self.zipfian_constant.is_nan() || self.zipfian_constant <= 0.0 {
            return Err(PropertyError {
                key: "zipfianconstant".into(),
                problem: "must be positive".into(),
            });
        }
        Ok(())
    }

    /// The workload in the cost model's vocabulary (YCSB's update is a blind update; records hold
    /// `field_count × field_length` bytes under keys of about 23 bytes).
    pub fn to_model(&self) -> cosine_design::Workload {
        self.to_model_over(self.record_count + self.inserted_before)
    }

    /// The model's workload over a data set of `records` keys: the load plus what inserts have added by the
    /// time of interest. Requests draw from every record inserted so far, so `records` is also the universe
    /// of the request distribution.
    pub fn to_model_over(&self, records: u64) -> cosine_design::Workload {
        use cosine_design::{KeyDistribution, OperationMix, Workload};
        let records = records.max(1);
        let dist = match self.distribution {
            Distribution::Uniform => KeyDistribution::Uniform {
                universe: Some(records),
            },
            Distribution::Zipfian => KeyDistribution::Zipfian {
                theta: self.zipfian_constant,
                universe: Some(records),
                items: Some((crate::ZIPF_ITEMS as u64).max(records)),
            },
            Distribution::Latest => KeyDistribution::Latest {
                theta: self.zipfian_constant,
            },
        };
        Workload {
            name: Some(self.name.clone()),
            mix: OperationMix {
                lookup: self.read,
                empty_lookup: 0.0,
                insert: self.insert,
                blind_update: self.update,
                rmw: self.read_modify_write,
                scan: self.scan,
            },
            scan_length: (self.max_scan_length / 2).max(1),
            reads: dist.clone(),
            // updates follow the request distribution; inserts add new keys; without updates the data's
            // layout is the load's, which inserted every record once
            writes: if self.update + self.read_modify_write > 0.0 {
                dist
            } else if self.insert > 0.0 {
                KeyDistribution::uniform()
            } else {
                KeyDistribution::Uniform {
                    universe: Some(records),
                }
            },
            entries: records,
            key_bytes: 23,
            value_bytes: self.value_bytes() as u64,
            operations: self.operation_count.max(1),
            operations_before: 0,
        }
    }
}

/// Parses YCSB's property-file format (`key=value` or `key: value`, `#` and `!` comments).
pub fn parse_properties(text: &str) -> Result<BTreeMap<String, String>, PropertyError> {
    let mut out = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let split = line.find(['=', ':']).ok_or_else(|| PropertyError {
            key: format!("line {}", i + 1),
            problem: format!("expected key=value, got '{line}'"),
        })?;
        out.insert(
            line[..split].trim().to_string(),
            line[split + 1..].trim().to_string(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_six_core_workloads() {
        for n in ["a", "b", "c", "d", "e", "f"] {
            let w = CoreWorkload::named(n).unwrap();
            w.validate().unwrap();
            w.to_model().validate().unwrap();
        }
        assert_eq!(
            CoreWorkload::named("d").unwrap().distribution,
            Distribution::Latest
        );
        assert_eq!(
            CoreWorkload::named("workloade").unwrap().max_scan_length,
            100
        );
        assert!(CoreWorkload::named("g").is_none());
    }

    #[test]
    fn the_model_requests_every_record_inserted_so_far() {
        use cosine_design::KeyDistribution;
        let mut e = CoreWorkload::named("e").unwrap();
        e.record_count = 1000;
        e.inserted_before = 500;
        // requests draw over the load and the inserts since, so the model's key space grows with them
        let m = e.to_model();
        assert_eq!(m.entries, 1500);
        assert!(matches!(
            m.reads,
            KeyDistribution::Zipfian {
                universe: Some(1500),
                ..
            }
        ));
        let later = e.to_model_over(2000);
        assert_eq!(later.entries, 2000);
        assert!(matches!(
            later.reads,
            KeyDistribution::Zipfian {
                universe: Some(2000),
                ..
            }
        ));
        let mut c = CoreWorkload::named("c").unwrap();
        c.record_count = 10;
        assert!(matches!(
            c.to_model_over(20).writes,
            KeyDistribution::Uniform { universe: Some(20) }
        ));
    }

    #[test]
    fn ycsb_property_files_load() {
        // YCSB's shipped workloads/workloada
        let text = "# Yahoo! Cloud System Benchmark\n# Workload A: Update heavy workload\nrecordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\nreadallfields=true\n\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\n\nrequestdistribution=zipfian\n";
        let mut w = CoreWorkload::defaults("workloada");
        w.apply(&parse_properties(text).unwrap()).unwrap();
        assert_eq!(
            (w.read, w.update, w.distribution),
            (0.5, 0.5, Distribution::Zipfian)
        );
        let bad = parse_properties("readproportion=2\nupdateproportion=0").unwrap();
        assert!(CoreWorkload::defaults("x").apply(&bad).is_err());
        assert!(parse_properties("no separator here").is_err());
    }
}
