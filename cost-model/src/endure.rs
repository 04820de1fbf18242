//! Endure's LSM cost model (Endure Section 5; MODEL.md §11): expected I/Os of empty lookups Z0, non-empty
//! lookups Z1, range lookups Q and writes W for a tuning Φ = (T, h, π) under Monkey filters.
//!
//! Units are Endure's: E and M in bits, B in entries per page. `EndureVariant::Paper` is the paper's model;
//! `EndureVariant::Code` reproduces the authors' public code (Z1 sums the levels above only up to i−2 and
//! has no (T−1) factor for tiering; Q and W use the real-valued depth ℓ; FPRs are not clamped).

use crate::bloom::LN2_SQ;
use serde::{Deserialize, Serialize};

/// Merge policy π.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// One run per level.
    Leveling,
    /// Up to T−1 runs per level.
    Tiering,
}

impl Policy {
    /// Both policies.
    pub const BOTH: [Policy; 2] = [Policy::Leveling, Policy::Tiering];

    /// "leveling" or "tiering".
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Leveling => "leveling",
            Policy::Tiering => "tiering",
        }
    }
}

/// Which form of the model to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndureVariant {
    /// The paper's Section 5 equations.
    #[default]
    Paper,
    /// The authors' public code.
    Code,
}

/// One tuning Φ: policy, size ratio T (continuous) and filter bits per entry h.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    /// π.
    pub policy: Policy,
    /// T.
    pub size_ratio: f64,
    /// h: filter bits per entry (m_filt = h·N).
    pub bits_per_entry: f64,
}

/// Endure's system parameters (MODEL.md §11.1 defaults).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndureSystem {
    /// N: entries.
    pub entries: f64,
    /// E: entry size in bits.
    pub entry_bits: f64,
    /// B: entries per page.
    pub entries_per_page: f64,
    /// M: total memory (buffer + filters) in bits.
    pub memory_bits: f64,
    /// S_RQ: fraction of entries a range lookup returns.
    pub selectivity: f64,
    /// A_rw: a page write costs (1 + A_rw) reads.
    pub asymmetry: f64,
    /// Memory that always stays for the buffer, in bits (1 MiB).
    pub min_buffer_bits: f64,
    /// Lowest size ratio searched.
    pub min_size_ratio: f64,
    /// Highest size ratio searched.
    pub max_size_ratio: f64,
    /// Paper or code form.
    pub variant: EndureVariant,
}

impl Default for EndureSystem {
    fn default() -> Self {
        EndureSystem::new(1e7, 1024.0, 4096.0, 10.0)
    }
}

impl EndureSystem {
    /// A system of `entries` entries of `entry_bytes` bytes, `page_bytes` pages and `bits_per_entry` bits of
    /// memory per entry in all, with S_RQ = 0, A_rw = 1, T ∈ [2, 100].
    pub fn new(entries: f64, entry_bytes: f64, page_bytes: f64, bits_per_entry: f64) -> Self {
        EndureSystem {
            entries,
            entry_bits: entry_bytes * 8.0,
            entries_per_page: (page_bytes / entry_bytes).max(1.0),
            memory_bits: bits_per_entry * entries,
            selectivity: 0.0,
            asymmetry: 1.0,
            min_buffer_bits: (1u64 << 23) as f64,
            min_size_ratio: 2.0,
            max_size_ratio: 100.0,
            variant: EndureVariant::Paper,
        }
    }

    /// The largest h that leaves the minimum buffer: (M − 2^23)/N, at least 0.
    pub fn max_bits_per_entry(&self) -> f64 {
        ((self.memory_bits - self.min_buffer_bits) / self.entries).max(0.0)
    }

    /// m_buf = M − h·N, in bits.
    pub fn buffer_bits(&self, bits_per_entry: f64) -> f64 {
        self.memory_bits - bits_per_entry * self.entries
    }

    /// ℓ = ln(N·E/m_buf + 1) / ln T, the real-valued depth.
    pub fn depth(&self, t: f64, bits_per_entry: f64) -> f64 {
        (self.entries * self.entry_bits / self.buffer_bits(bits_per_entry) + 1.0).ln() / t.ln()
    }

    /// L = ⌈ℓ⌉ (at least 1).
    pub fn levels(&self, t: f64, bits_per_entry: f64) -> u32 {
        (self.depth(t, bits_per_entry) - 1e-12).ceil().max(1.0) as u32
    }

    /// The cost vector c(Φ) = (Z0, Z1, Q, W).
    pub fn costs(&self, tuning: &Tuning) -> [f64; 4] {
        let t = tuning.size_ratio;
        let h = tuning.bits_per_entry;
        let m_buf = self.buffer_bits(h);
        let depth = self.depth(t, h);
        let l = self.levels(t, h) as i32;
        let code = self.variant == EndureVariant::Code;
        let base = (-h * LN2_SQ).exp() * t.powf(t / (t - 1.0));
        let f: Vec<f64> = (1..=l)
            .map(|i| {
                let v = base / t.powi(l + 1 - i);
                if code {
                    v
                } else {
                    v.clamp(0.0, 1.0)
                }
            })
            .collect();
        let level_entries = |i: i32| (t - 1.0) * t.powi(i - 1) * m_buf / self.entry_bits;
        let n_f: f64 = (1..=l).map(level_entries).sum();
        let tiering = tuning.policy == Policy::Tiering;
        let sum_f: f64 = f.iter().sum();
        let z0 = if tiering { (t - 1.0) * sum_f } else { sum_f };
        let mut z1 = 0.0;
        let mut above = 0.0; // Σ_{j<i} f_j (paper) or Σ_{j≤i−2} f_j (code)
        for i in 1..=l {
            let p = level_entries(i) / n_f;
            let idx = i as usize - 1;
            if code && i >= 3 {
                above += f[idx - 2];
            }
            let cost = if tiering {
                if code {
                    1.0 + above + (t - 2.0) / 2.0 * f[idx]
                } else {
                    1.0 + (t - 1.0) * above + (t - 2.0) / 2.0 * f[idx]
                }
            } else {
                1.0 + above
            };
            z1 += p * cost;
            if !code {
                above += f[idx];
            }
        }
        let depth_used = if code { depth } else { l as f64 };
        let seeks = if tiering {
            depth_used * (t - 1.0)
        } else {
            depth_used
        };
        let q = self.selectivity * self.entries / self.entries_per_page + seeks;
        let merges = if tiering {
            (t - 1.0) / t
        } else {
            (t - 1.0) / 2.0
        };
        let w = depth_used * merges * (1.0 + self.asymmetry) / self.entries_per_page;
        [z0, z1, q, w]
    }

    /// C(w, Φ) = w · c(Φ).
    pub fn cost(&self, workload: &[f64; 4], tuning: &Tuning) -> f64 {
        dot(workload, &self.costs(tuning))
    }
}

/// w · c.
pub fn dot(a: &[f64; 4], b: &[f64; 4]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_endures() {
        let s = EndureSystem::default();
        assert_eq!(s.entries_per_page, 4.0);
        assert_eq!(s.entry_bits, 8192.0);
        assert!((s.max_bits_per_entry() - 9.1611392).abs() < 1e-6);
    }

    #[test]
    fn tiering_equals_leveling_at_t_2() {
        let s = EndureSystem::default();
        let a = s.costs(&Tuning {
            policy: Policy::Leveling,
            size_ratio: 2.0,
            bits_per_entry: 5.0,
        });
        let b = s.costs(&Tuning {
            policy: Policy::Tiering,
            size_ratio: 2.0,
            bits_per_entry: 5.0,
        });
        for i in 0..4 {
            assert!((a[i] - b[i]).abs() < 1e-12, "{i}: {a:?} {b:?}");
        }
    }

    #[test]
    fn tiering_writes_cheaper_reads_dearer() {
        let s = EndureSystem::default();
        for t in [4.0, 10.0, 30.0] {
            let lev = s.costs(&Tuning {
                policy: Policy::Leveling,
                size_ratio: t,
                bits_per_entry: 5.0,
            });
            let tier = s.costs(&Tuning {
                policy: Policy::Tiering,
                size_ratio: t,
                bits_per_entry: 5.0,
            });
            assert!(tier[3] < lev[3]);
            assert!(tier[0] > lev[0] && tier[1] > lev[1] && tier[2] > lev[2]);
        }
    }

    #[test]
    fn z0_by_hand() {
        // leveling, T = 10, h = 5: L = ⌈ln(1e7·8192/m_buf + 1)/ln 10⌉, f_i = e^{−5 ln²2}·10^{10/9}/10^{L+1−i}
        let s = EndureSystem::default();
        let tu = Tuning {
            policy: Policy::Leveling,
            size_ratio: 10.0,
            bits_per_entry: 5.0,
        };
        let m_buf = 1e8 - 5e7;
        let l = ((1e7 * 8192.0 / m_buf + 1.0f64).ln() / 10f64.ln()).ceil() as i32;
        assert_eq!(l, 4);
        let base = (-5.0 * LN2_SQ).exp() * 10f64.powf(10.0 / 9.0);
        let z0: f64 = (1..=l).map(|i| base / 10f64.powi(l + 1 - i)).sum();
        assert!((s.costs(&tu)[0] - z0).abs() < 1e-15);
        // W = L (T−1)(1+A)/(2B) = 4·9·2/8 = 9
        assert!((s.costs(&tu)[3] - 9.0).abs() < 1e-12);
        // Q with S_RQ = 0 is the L seeks
        assert_eq!(s.costs(&tu)[2], 4.0);
    }

    #[test]
    fn code_variant_differs_as_documented() {
        let mut s = EndureSystem::default();
        let tu = Tuning {
            policy: Policy::Tiering,
            size_ratio: 7.5,
            bits_per_entry: 2.0,
        };
        let paper = s.costs(&tu);
        s.variant = EndureVariant::Code;
        let code = s.costs(&tu);
        assert_eq!(paper[0], code[0]); // Z0 identical while FPRs ≤ 1
        assert!(code[1] < paper[1]); // fewer false positives counted
        assert!(code[2] < paper[2] && code[3] < paper[3]); // ℓ < L
    }
}
