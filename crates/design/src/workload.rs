//! `Workload`: the operation mix, key distributions and data shape that the cost model and the engine share.

use crate::error::{DesignError, Result};
use serde::{Deserialize, Serialize};

/// Tolerance within which operation fractions must add up to 1.
pub const FRACTION_TOLERANCE: f64 = 1e-9;

/// Fractions of each operation type; they add up to 1.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OperationMix {
    /// θ_r·θ_l: point lookups of keys that exist (single result).
    #[serde(default)]
    pub lookup: f64,
    /// θ_r·(1−θ_l): point lookups of keys that do not exist (no result).
    #[serde(default)]
    pub empty_lookup: f64,
    /// θ_p: inserts.
    #[serde(default)]
    pub insert: f64,
    /// θ_u: blind updates (overwrite without reading).
    #[serde(default)]
    pub blind_update: f64,
    /// θ_w: read-modify-writes.
    #[serde(default)]
    pub rmw: f64,
    /// θ_s: range scans of `scan_length` entries.
    #[serde(default)]
    pub scan: f64,
}

impl OperationMix {
    /// The fractions with their names, in a fixed order.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("lookup", self.lookup),
            ("empty_lookup", self.empty_lookup),
            ("insert", self.insert),
            ("blind_update", self.blind_update),
            ("rmw", self.rmw),
            ("scan", self.scan),
        ]
    }

    /// Builds a mix from the six fractions in `named()` order.
    pub fn from_array(f: [f64; 6]) -> Self {
        OperationMix {
            lookup: f[0],
            empty_lookup: f[1],
            insert: f[2],
            blind_update: f[3],
            rmw: f[4],
            scan: f[5],
        }
    }

    /// The six fractions in `named()` order.
    pub fn to_array(&self) -> [f64; 6] {
        self.named().map(|(_, v)| v)
    }

    /// Checks every fraction is in [0, 1] and that they add up to 1 within `FRACTION_TOLERANCE`.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in self.named() {
            if !(value.is_finite() && (0.0..=1.0).contains(&value)) {
                return Err(DesignError::FractionRange { name, value });
            }
        }
        let sum: f64 = self.to_array().iter().sum();
        if (sum - 1.0).abs() > FRACTION_TOLERANCE {
            return Err(DesignError::FractionSum(sum));
        }
        Ok(())
    }

    /// Share of read-like operations (lookups, rmws and scans).
    pub fn reads(&self) -> f64 {
        self.lookup + self.empty_lookup + self.rmw + self.scan
    }

    /// Share of write-like operations (inserts and blind updates).
    pub fn writes(&self) -> f64 {
        self.insert + self.blind_update
    }
}

/// One partition of a k-partition skew: `universe` keys, drawn uniformly within the partition, which as a whole
/// receives `probability` of the operations.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    /// Distinct keys in this partition.
    pub universe: u64,
    /// Probability that an operation targets this partition.
    pub probability: f64,
}

/// How the keys of reads or of writes are distributed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum KeyDistribution {
    /// Uniform over `universe` keys (default: 100 × the entry count, the ratio the authors' code uses).
    Uniform {
        /// Distinct keys that can occur; `None` uses 100 × entries.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        universe: Option<u64>,
    },
    /// Cosine's two-partition skew (a weighted-Bloom-filter step distribution): with `probability` a key is drawn
    /// uniformly from `special_universe` special keys, otherwise from `regular_universe` regular keys.
    Skew {
        /// U_1: the special (hot) keys.
        special_universe: u64,
        /// U_2: the regular keys; `None` uses the entry count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        regular_universe: Option<u64>,
        /// p_put or p_get: probability that an operation targets a special key.
        probability: f64,
    },
    /// The k-partition generalisation of the skew model (Cosine Section 3).
    Partitioned {
        /// The partitions; probabilities add up to 1.
        partitions: Vec<Partition>,
    },
    /// Zipfian over `universe` ranks with exponent θ (YCSB uses 0.99, scrambled). The cost model bins it into
    /// decades of rank, each a partition of the skew model.
    Zipfian {
        /// Exponent θ > 0.
        theta: f64,
        /// Ranks (distinct keys); `None` uses the entry count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        universe: Option<u64>,
        /// Scrambled: ranks are drawn over this many items and hashed onto the universe, so ranks beyond the
        /// universe land on keys at random (YCSB's scrambled zipfian draws over 10^10 items). `None`: over
        /// the universe itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        items: Option<u64>,
    },
    /// YCSB's "latest": Zipfian over recency (the newest insert is the most popular).
    Latest {
        /// Exponent θ > 0.
        theta: f64,
    },
}

impl KeyDistribution {
    /// Checks probabilities and universes.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(DesignError::Distribution(m));
        match self {
            KeyDistribution::Uniform { universe } => {
                if *universe == Some(0) {
                    return bad("uniform universe must be positive".into());
                }
            }
            KeyDistribution::Skew {
                special_universe,
                regular_universe,
                probability,
            } => {
                if *special_universe == 0 || *regular_universe == Some(0) {
                    return bad("skew universes must be positive".into());
                }
                if !(probability.is_finite() && (0.0..=1.0).contains(probability)) {
                    return bad(format!("skew probability {probability} is outside [0, 1]"));
                }
            }
            KeyDistribution::Partitioned { partitions } => {
                if partitions.is_empty() {
                    return bad("partitioned distribution needs at least one partition".into());
                }
                let mut sum = 0.0;
                for p in partitions {
                    if p.universe == 0 {
                        return bad("partition universe must be positive".into());
                    }
                    if !(p.probability.is_finite() && (0.0..=1.0).contains(&p.probability)) {
                        return bad(format!(
                            "partition probability {} is outside [0, 1]",
                            p.probability
                        ));
                    }
                    sum += p.probability;
                }
                if (sum - 1.0).abs() > 1e-6 {
                    return bad(format!("partition probabilities sum to {sum}, not 1"));
                }
            }
            KeyDistribution::Zipfian {
                theta,
                universe,
                items,
            } => {
                if !(theta.is_finite() && *theta > 0.0) {
                    return bad(format!("zipfian theta {theta} must be positive"));
                }
                if *universe == Some(0) {
                    return bad("zipfian universe must be positive".into());
                }
                if let (Some(i), Some(u)) = (items, universe) {
                    if i < u {
                        return bad(format!(
                            "zipfian items {i} must be at least its universe {u}"
                        ));
                    }
                }
            }
            KeyDistribution::Latest { theta } => {
                if !(theta.is_finite() && *theta > 0.0) {
                    return bad(format!("latest theta {theta} must be positive"));
                }
            }
        }
        Ok(())
    }

    /// The uniform distribution with the default universe.
    pub fn uniform() -> Self {
        KeyDistribution::Uniform { universe: None }
    }
}

fn default_key_bytes() -> u64 {
    16
}
fn default_value_bytes() -> u64 {
    1008
}
fn default_entries() -> u64 {
    10_000_000
}
fn is_zero(n: &u64) -> bool {
    *n == 0
}
fn default_operations() -> u64 {
    10_000_000
}
fn default_scan_length() -> u64 {
    100
}
fn default_dist() -> KeyDistribution {
    KeyDistribution::uniform()
}

/// A workload: what operations, on which keys, over how much data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// A name for reports (e.g. "ycsb-a").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Operation fractions.
    pub mix: OperationMix,
    /// Entries returned by one scan (s).
    #[serde(default = "default_scan_length")]
    pub scan_length: u64,
    /// Key distribution of lookups, rmws and scans.
    #[serde(default = "default_dist")]
    pub reads: KeyDistribution,
    /// Key distribution of inserts and updates.
    #[serde(default = "default_dist")]
    pub writes: KeyDistribution,
    /// N: entries in the data set.
    #[serde(default = "default_entries")]
    pub entries: u64,
    /// Key size in bytes.
    #[serde(default = "default_key_bytes")]
    pub key_bytes: u64,
    /// Value size in bytes.
    #[serde(default = "default_value_bytes")]
    pub value_bytes: u64,
    /// χ: operations in the workload.
    #[serde(default = "default_operations")]
    pub operations: u64,
    /// χ₀: operations of this workload the store ran before these χ (0: they start on the freshly loaded,
    /// settled store). The store's state (the versions a tiered level keeps, an LSH design's runs, the keys of
    /// a level never pushed down) is the state after χ₀ + χ of them; a write's flush and compaction price is
    /// its mean over the χ.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub operations_before: u64,
}

impl Workload {
    /// A workload with the given mix, uniform keys and the default data shape (10^7 entries of 1 KiB).
    pub fn with_mix(mix: OperationMix) -> Self {
        Workload {
            name: None,
            mix,
            scan_length: default_scan_length(),
            reads: default_dist(),
            writes: default_dist(),
            entries: default_entries(),
            key_bytes: default_key_bytes(),
            value_bytes: default_value_bytes(),
            operations: default_operations(),
            operations_before: 0,
        }
    }

    /// E: bytes per entry (key + value).
    pub fn entry_bytes(&self) -> u64 {
        self.key_bytes + self.value_bytes
    }

    /// Checks fractions, distributions and sizes.
    pub fn validate(&self) -> Result<()> {
        self.mix.validate()?;
        self.reads.validate()?;
        self.writes.validate()?;
        if self.entries == 0 {
            return Err(DesignError::Zero("entries"));
        }
        if self.key_bytes == 0 {
            return Err(DesignError::Zero("key_bytes"));
        }
        if self.key_bytes > crate::MAX_KEY_BYTES {
            return Err(DesignError::OutOfRange {
                field: "key_bytes",
                value: self.key_bytes.to_string(),
                reason: "keys are at most 64 KiB",
            });
        }
        if self.value_bytes > crate::MAX_VALUE_BYTES {
            return Err(DesignError::OutOfRange {
                field: "value_bytes",
                value: self.value_bytes.to_string(),
                reason: "values are at most 1 GiB",
            });
        }
        if self.operations == 0 {
            return Err(DesignError::Zero("operations"));
        }
        if self.mix.scan > 0.0 && self.scan_length == 0 {
            return Err(DesignError::Zero("scan_length"));
        }
        Ok(())
    }

    /// Parses and validates a workload.json document.
    pub fn from_json(text: &str) -> Result<Self> {
        let w: Workload = serde_json::from_str(text).map_err(|e| DesignError::Malformed {
            what: "workload",
            message: e.to_string(),
        })?;
        w.validate()?;
        Ok(w)
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_must_sum_to_one() {
        let mut w = Workload::with_mix(OperationMix {
            lookup: 0.5,
            insert: 0.5,
            ..Default::default()
        });
        assert!(w.validate().is_ok());
        w.mix.insert = 0.5 + 2e-9;
        assert!(matches!(w.validate(), Err(DesignError::FractionSum(_))));
        w.mix.insert = 0.5 + 5e-10;
        assert!(w.validate().is_ok());
    }

    #[test]
    fn fraction_outside_unit_interval() {
        let w = Workload::with_mix(OperationMix {
            lookup: 1.5,
            insert: -0.5,
            ..Default::default()
        });
        assert!(matches!(
            w.validate(),
            Err(DesignError::FractionRange { name: "lookup", .. })
        ));
    }

    #[test]
    fn zero_entries_rejected() {
        let mut w = Workload::with_mix(OperationMix {
            lookup: 1.0,
            ..Default::default()
        });
        w.entries = 0;
        assert_eq!(w.validate(), Err(DesignError::Zero("entries")));
    }

    #[test]
    fn json_round_trip_with_skew() {
        let mut w = Workload::with_mix(OperationMix {
            lookup: 0.3,
            insert: 0.7,
            ..Default::default()
        });
        w.writes = KeyDistribution::Skew {
            special_universe: 100_000,
            regular_universe: None,
            probability: 0.2,
        };
        w.reads = KeyDistribution::Partitioned {
            partitions: vec![
                Partition {
                    universe: 10,
                    probability: 0.5,
                },
                Partition {
                    universe: 1000,
                    probability: 0.5,
                },
            ],
        };
        let back = Workload::from_json(&w.to_json()).unwrap();
        assert_eq!(back, w);
    }

    #[test]
    fn malformed_json() {
        assert!(matches!(
            Workload::from_json("{\"mix\": 3}"),
            Err(DesignError::Malformed { .. })
        ));
        let bad = r#"{"mix":{"lookup":1.0},"reads":{"kind":"skew","special_universe":10,"probability":2.0}}"#;
        assert!(matches!(
            Workload::from_json(bad),
            Err(DesignError::Distribution(_))
        ));
    }
}
