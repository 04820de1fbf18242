//! The key space as the distribution-aware model sees it: partitions of keys, each uniform inside, with the
//! probability that a write (put) and a read (get) targets it (Cosine Section 3, MODEL.md §2.1, §8.4).

use cosine_design::{KeyDistribution, Workload};
use rustc_hash::FxHashMap;
use std::cell::RefCell;

/// Default ratio of key universe to entries for uniform keys (the authors' code: U = 10^14 for N = 10^12).
pub const DEFAULT_UNIVERSE_RATIO: f64 = 100.0;

/// One partition of the key space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyPart {
    /// Distinct keys in the partition (U_j).
    pub universe: f64,
    /// Probability that a write targets this partition.
    pub put: f64,
    /// Probability that a read targets this partition.
    pub get: f64,
    /// How α is computed for this partition.
    pub alpha: AlphaForm,
    /// ln(1 − put/U): the log-chance that one write misses a given key of the partition (−∞ when put ≥ U),
    /// kept beside the fields it follows from (see [`KeyPart::new`]).
    ln_keep: f64,
}

impl KeyPart {
    /// A partition of `universe` keys taking the share `put` of writes and `get` of reads.
    pub fn new(universe: f64, put: f64, get: f64, alpha: AlphaForm) -> Self {
        let x = put / universe;
        KeyPart {
            universe,
            put,
            get,
            alpha,
            ln_keep: if x >= 1.0 {
                f64::NEG_INFINITY
            } else {
                (-x).ln_1p()
            },
        }
    }
}

/// The two α forms of the authors' code (MODEL.md §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlphaForm {
    /// α = min(1, put·n/U): uniform keys and the regular keys of the skew model.
    Linear,
    /// α = 1 − (1 − put/U)^n: the special keys of the skew model, and every partition of a k-partition skew.
    Exact,
}

/// The key space of a workload.
#[derive(Clone, Debug, PartialEq)]
pub enum KeySpace {
    /// Uniform keys over a universe U.
    Uniform {
        /// U.
        universe: f64,
    },
    /// Cosine's two-partition skew (special keys U_1, regular keys U_2).
    Skew {
        /// U_1.
        special: f64,
        /// U_2.
        regular: f64,
        /// p_put.
        p_put: f64,
        /// p_get.
        p_get: f64,
    },
    /// k partitions (from a Partitioned, Zipfian or Latest distribution).
    Parts(Vec<KeyPart>),
}

/// Partitions of a distribution as (universe, probability), with `n` the entry count for defaults.
fn parts_of(d: &KeyDistribution, n: f64) -> Option<Vec<(f64, f64)>> {
    match d {
        KeyDistribution::Uniform { .. } => None,
        KeyDistribution::Skew {
            special_universe,
            regular_universe,
            probability,
        } => Some(vec![
            (*special_universe as f64, *probability),
            (
                regular_universe.map(|u| u as f64).unwrap_or(n),
                1.0 - probability,
            ),
        ]),
        KeyDistribution::Partitioned { partitions } => Some(
            partitions
                .iter()
                .map(|p| (p.universe as f64, p.probability))
                .collect(),
        ),
        KeyDistribution::Zipfian {
            theta,
            universe,
            items,
        } => {
            let u = universe.map(|u| u as f64).unwrap_or(n);
            Some(match items {
                Some(i) if (*i as f64) > u => scrambled_zipf_bins(*theta, u, *i as f64),
                _ => zipf_bins(*theta, u),
            })
        }
        KeyDistribution::Latest { theta } => Some(zipf_bins(*theta, n)),
    }
}

/// Generalised harmonic number H(n, θ) = Σ_{r=1}^{n} r^{−θ}: exact up to 64 terms, Euler–Maclaurin beyond
/// (relative error below 1e-12 for θ in (0, 3]).
pub fn harmonic(n: f64, theta: f64) -> f64 {
    const EXACT: f64 = 64.0;
    let n = n.floor();
    if n <= 0.0 {
        return 0.0;
    }
    let m = n.min(EXACT);
    let mut h = 0.0;
    let mut r = m;
    while r >= 1.0 {
        h += r.powf(-theta);
        r -= 1.0;
    }
    if n <= EXACT {
        return h;
    }
    // ∫_m^n x^{−θ} dx + (f(n) − f(m))/2 − (f'(n) − f'(m))/12, with f(x) = x^{−θ}.
    let integral = if (theta - 1.0).abs() < 1e-12 {
        (n / m).ln()
    } else {
        (n.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta)
    };
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3f = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    h + integral + (f(n) - f(m)) / 2.0 + (df(n) - df(m)) / 12.0 - (d3f(n) - d3f(m)) / 720.0
}

/// Bins a Zipfian(θ) over `universe` ranks into partitions of ranks [4^k, 4^{k+1}); each bin is treated as
/// uniform inside and receives the Zipf mass of its ranks. This is how YCSB's zipfian enters the skew model.
pub fn zipf_bins(theta: f64, universe: f64) -> Vec<(f64, f64)> {
    let u = universe.max(1.0).floor();
    let total = harmonic(u, theta);
    let mut bins = Vec::new();
    let mut lo = 1.0f64;
    while lo <= u {
        let hi = (lo * 4.0 - 1.0).min(u);
        let mass = harmonic(hi, theta) - harmonic(lo - 1.0, theta);
        bins.push((hi - lo + 1.0, mass / total));
        lo = hi + 1.0;
    }
    bins
}

/// A Zipfian(θ) drawn over `items` ranks and hashed onto `universe` keys (YCSB's scrambled zipfian): the
/// first `universe` ranks are binned as [`zipf_bins`] with their share of the mass over all `items`, and the
/// ranks beyond the universe, hashed to keys at random, spread their mass over every bin by its size.
pub fn scrambled_zipf_bins(theta: f64, universe: f64, items: f64) -> Vec<(f64, f64)> {
    let u = universe.max(1.0).floor();
    let inside = harmonic(u, theta) / harmonic(items.max(u), theta);
    let tail = 1.0 - inside;
    zipf_bins(theta, u)
        .into_iter()
        .map(|(size, p)| (size, p * inside + tail * size / u))
        .collect()
}

impl KeySpace {
    /// Builds the joint key space of a workload's reads and writes.
    ///
    /// Uniform/uniform gives one universe (the writes' universe, else the reads', else 100 × entries).
    /// Skew/skew over the same universes gives Cosine's two-partition model. Otherwise the partitions come from
    /// whichever side is structured (reads first); a uniform side spreads over them in proportion to their size.
    pub fn from_workload(w: &Workload) -> KeySpace {
        let n = w.entries as f64;
        match (&w.reads, &w.writes) {
            (
                KeyDistribution::Uniform { universe: ru },
                KeyDistribution::Uniform { universe: wu },
            ) => {
                let u = wu
                    .or(*ru)
                    .map(|u| u as f64)
                    .unwrap_or(n * DEFAULT_UNIVERSE_RATIO);
                KeySpace::Uniform { universe: u }
            }
            (
                KeyDistribution::Skew {
                    special_universe: r1,
                    regular_universe: r2,
                    probability: p_get,
                },
                KeyDistribution::Skew {
                    special_universe: w1,
                    regular_universe: w2,
                    probability: p_put,
                },
            ) if r1 == w1 && r2 == w2 => KeySpace::Skew {
                special: *w1 as f64,
                regular: w2.map(|u| u as f64).unwrap_or(n),
                p_put: *p_put,
                p_get: *p_get,
            },
            (
                KeyDistribution::Uniform { .. },
                KeyDistribution::Skew {
                    special_universe,
                    regular_universe,
                    probability,
                },
            ) => {
                let (u1, u2) = (
                    *special_universe as f64,
                    regular_universe.map(|u| u as f64).unwrap_or(n),
                );
                KeySpace::Skew {
                    special: u1,
                    regular: u2,
                    p_put: *probability,
                    p_get: u1 / (u1 + u2),
                }
            }
            (r, wd) => {
                let read_parts = parts_of(r, n);
                let write_parts = parts_of(wd, n);
                let (base, from_reads) = match (&read_parts, &write_parts) {
                    (Some(p), _) => (p.clone(), true),
                    (None, Some(p)) => (p.clone(), false),
                    (None, None) => unreachable!("uniform/uniform handled above"),
                };
                let total_u: f64 = base.iter().map(|(u, _)| u).sum();
                let same_shape = match (&read_parts, &write_parts) {
                    (Some(a), Some(b)) => {
                        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0)
                    }
                    _ => false,
                };
                let parts = base
                    .iter()
                    .enumerate()
                    .map(|(j, &(u, p))| {
                        let share = u / total_u;
                        let (get, put) = if same_shape {
                            (p, write_parts.as_ref().map(|w| w[j].1).unwrap_or(share))
                        } else if from_reads {
                            (p, share)
                        } else {
                            (share, p)
                        };
                        KeyPart::new(u, put, get, AlphaForm::Exact)
                    })
                    .collect();
                KeySpace::Parts(parts)
            }
        }
    }

    /// [`KeySpace::parts`], borrowed where the key space already holds them (a model pricing thousands of
    /// designs on one key space needs no copy per design).
    pub fn parts_cow(&self) -> std::borrow::Cow<'_, [KeyPart]> {
        match self {
            KeySpace::Parts(p) => std::borrow::Cow::Borrowed(p),
            _ => std::borrow::Cow::Owned(self.parts()),
        }
    }

    /// The partitions with their α forms (uniform: one Linear part; skew: Exact special + Linear regular).
    pub fn parts(&self) -> Vec<KeyPart> {
        match self {
            KeySpace::Uniform { universe } => {
                vec![KeyPart::new(*universe, 1.0, 1.0, AlphaForm::Linear)]
            }
            KeySpace::Skew {
                special,
                regular,
                p_put,
                p_get,
            } => vec![
                KeyPart::new(*special, *p_put, *p_get, AlphaForm::Exact),
                KeyPart::new(*regular, 1.0 - p_put, 1.0 - p_get, AlphaForm::Linear),
            ],
            KeySpace::Parts(p) => p.clone(),
        }
    }

    /// N_eff: the distinct keys in the data set (MODEL.md §1.1), which sets the level count.
    ///
    /// Fixed model: `entries` is the data set's size, so N_eff = min(N, Σ_j U_j), the universe caps it.
    /// With `skew_shrinks_entries` (the reference code), the data set is taken to be built by N writes from
    /// the write distribution: skew gives min(N, U_1 + (1 − p_put)N), and k partitions Σ_j min(U_j, p_j N).
    pub fn effective_entries(&self, n: f64, skew_shrinks_entries: bool) -> f64 {
        match self {
            KeySpace::Uniform { universe } => n.min(*universe),
            KeySpace::Skew {
                special,
                regular,
                p_put,
                ..
            } => {
                if skew_shrinks_entries {
                    n.min(special + (1.0 - p_put) * n)
                } else {
                    n.min(special + regular)
                }
            }
            KeySpace::Parts(parts) => {
                if skew_shrinks_entries {
                    parts
                        .iter()
                        .map(|p| p.universe.min(p.put * n))
                        .sum::<f64>()
                        .min(n)
                } else {
                    n.min(parts.iter().map(|p| p.universe).sum())
                }
            }
        }
    }

    /// α for one run of `n` entries, for a key of partition `part` (MODEL.md §2.1).
    pub fn alpha(part: &KeyPart, n: f64) -> f64 {
        if n <= 0.0 || part.put <= 0.0 {
            return 0.0;
        }
        match part.alpha {
            AlphaForm::Linear => (part.put * n / part.universe).min(1.0),
            AlphaForm::Exact => {
                let x = part.put / part.universe;
                if x >= 1.0 {
                    1.0
                } else {
                    -(n * (-x).ln_1p()).exp_m1()
                }
            }
        }
    }
}

/// ∫ (1 − α(part, w)) dw over w in [a, b] (0 ≤ a ≤ b): the chance a key of `part` is not among w writes,
/// integrated over a stretch of writes, in closed form (e^{w·ln(1 − put/U)} for the exact form, 1 − put·w/U
/// until it reaches 0 for the linear one).
pub fn not_written_integral(part: &KeyPart, a: f64, b: f64) -> f64 {
    let (a, b) = (a.max(0.0), b.max(0.0));
    if b <= a {
        return 0.0;
    }
    if part.put <= 0.0 {
        return b - a;
    }
    match part.alpha {
        AlphaForm::Linear => {
            let end = part.universe / part.put;
            let (a, b) = (a.min(end), b.min(end));
            let c = part.put / part.universe;
            (b - a) - c * (b * b - a * a) / 2.0
        }
        AlphaForm::Exact => {
            let l = part.ln_keep;
            if l == f64::NEG_INFINITY {
                // every write hits the key: after any write (w > 0) it is certainly written
                0.0
            } else if l == 0.0 {
                b - a
            } else {
                // (e^{bL} − e^{aL})/L, as e^{aL}·(e^{(b−a)L} − 1)/L
                exp_or_zero(a * l) * ((b - a) * l).exp_m1() / l
            }
        }
    }
}

impl KeySpace {
    /// ln(1 − α) for one run of `n` entries and a key of partition `part`: what [`KeySpace::alpha`] gives, taken
    /// straight from its form (for the exact form, n·ln(1 − put/U) without the round trip through α).
    pub fn ln_not_alpha(part: &KeyPart, n: f64) -> f64 {
        if n <= 0.0 || part.put <= 0.0 {
            return 0.0;
        }
        match part.alpha {
            AlphaForm::Linear => (-(part.put * n / part.universe).min(1.0)).ln_1p(),
            AlphaForm::Exact => n * part.ln_keep,
        }
    }
}

/// e^x, answering 0 at once where e^x underflows to 0 anyway (libm's underflow path is slow, and the model's
/// chances of missing a hot key in a long run underflow often).
#[inline]
pub fn exp_or_zero(x: f64) -> f64 {
    // below ln(smallest subnormal) − ½, e^x rounds to 0
    if x < -745.2 {
        0.0
    } else {
        x.exp()
    }
}

/// Coupon collector: expected uniform draws from `u` items to collect `n` distinct ones, u·ln(u/(u−n+1));
/// −1 when n > u and 1 when n = 1, as the authors' code defines it; n when u is infinite (fresh keys).
pub fn coupon_collector(u: f64, n: f64) -> f64 {
    if u.is_infinite() {
        // every write is a new key (inserts)
        n.max(1.0)
    } else if n > u {
        -1.0
    } else if n <= 1.0 {
        1.0
    } else {
        u * (u / (u - n + 1.0)).ln()
    }
}

/// Writes needed until `n` distinct keys are expected under a k-partition distribution: the w with
/// Σ_j U_j (1 − (1 − p_j/U_j)^w) = n (the k-partition generalisation of the coupon collector); None if
/// the universe has fewer than `n` keys that writes can reach.
pub fn writes_to_fill(parts: &[KeyPart], n: f64) -> Option<f64> {
    let mut out = [None];
    writes_to_fill_each(parts, &[n], &mut out);
    out[0]
}

/// [`writes_to_fill`] for each of `ns` into `out` (of the same length), finding the key space's solutions
/// once for all of them (a model pricing a tree asks for one per level).
pub fn writes_to_fill_each(parts: &[KeyPart], ns: &[f64], out: &mut [Option<f64>]) {
    FILLS.with(|cell| {
        let mut spaces = cell.borrow_mut();
        match spaces.iter().position(|(p, _)| same_parts(p, parts)) {
            Some(0) => {}
            Some(i) => {
                let space = spaces.remove(i);
                spaces.insert(0, space);
            }
            None => {
                spaces.truncate(FILL_SPACES - 1);
                spaces.insert(0, (parts.to_vec(), FxHashMap::default()));
            }
        }
        let solved = &mut spaces[0].1;
        for (&n, w) in ns.iter().zip(out.iter_mut()) {
            *w = match solved.get(&n.to_bits()) {
                Some(&w) => w,
                None => {
                    let w = solve_writes_to_fill(parts, n);
                    if solved.len() >= FILL_SOLUTIONS {
                        solved.clear();
                    }
                    solved.insert(n.to_bits(), w);
                    w
                }
            };
        }
    })
}

thread_local! {
    /// [`writes_to_fill`]'s solutions on this thread for the key spaces it solved last, most recent first (a
    /// search prices thousands of designs on one key space, and their buffers and levels share sizes): the
    /// parts themselves are the key, compared whole, so a solution is only ever reused for the same parts and n.
    static FILLS: RefCell<Vec<SolvedSpace>> = const { RefCell::new(Vec::new()) };
}

/// A key space's parts and the [`writes_to_fill`] solutions found for it, by n's bits.
type SolvedSpace = (Vec<KeyPart>, FxHashMap<u64, Option<f64>>);

/// Key spaces whose [`writes_to_fill`] solutions a thread keeps.
const FILL_SPACES: usize = 8;
/// Solutions kept for one key space (all are dropped when it fills up).
const FILL_SOLUTIONS: usize = 1 << 14;

/// Whether two key spaces' parts are the same, bit for bit (what a solution was found for): every field
/// compared without branching, since a search asks this of the same parts for each design it prices. Stricter
/// than `==` only on signed zeros, where it misses and the solution is found again.
fn same_parts(a: &[KeyPart], b: &[KeyPart]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).fold(0u64, |d, (x, y)| {
            d | (x.universe.to_bits() ^ y.universe.to_bits())
                | (x.put.to_bits() ^ y.put.to_bits())
                | (x.get.to_bits() ^ y.get.to_bits())
                | (x.ln_keep.to_bits() ^ y.ln_keep.to_bits())
                | u64::from(x.alpha != y.alpha)
        }) == 0
}

/// [`writes_to_fill`] solved by Newton's method.
fn solve_writes_to_fill(parts: &[KeyPart], n: f64) -> Option<f64> {
    let reachable: f64 = parts
        .iter()
        .filter(|p| p.put > 0.0)
        .map(|p| p.universe)
        .sum();
    if n >= reachable {
        return None;
    }
    // f(w) = Σ_j U_j (1 − (1 − x_j)^w) − n is concave and increasing in w, so Newton's method started left of
    // the root (w = n, where at most n distinct keys can have been drawn) climbs to it without overshooting.
    // a partition every write hits (put ≥ U) counts as hit all but once in 10^16
    let floor = (-(1.0 - 1e-16f64)).ln_1p();
    let terms = parts
        .iter()
        .filter(|p| p.put > 0.0)
        .map(|p| (p.universe, p.ln_keep.max(floor)));
    let mut w = n.max(1.0);
    for _ in 0..200 {
        let mut f = -n;
        let mut df = 0.0;
        for (u, ln1mx) in terms.clone() {
            let e = exp_or_zero(w * ln1mx);
            f += u * (1.0 - e);
            df -= u * e * ln1mx;
        }
        if f >= -1e-9 * n || df <= 0.0 {
            break;
        }
        let step = -f / df;
        w += step;
        if step <= 1e-12 * w {
            break;
        }
    }
    Some(w)
}

/// Distinct keys expected after `w` writes under a k-partition distribution: Σ_j U_j (1 − (1 − p_j/U_j)^w),
/// the inverse of [`writes_to_fill`] (w itself when the writes reach an unbounded universe, as inserts do).
pub fn distinct_after(parts: &[KeyPart], w: f64) -> f64 {
    if w <= 0.0 {
        return 0.0;
    }
    parts
        .iter()
        .filter(|p| p.put > 0.0)
        .map(|p| {
            if p.universe.is_infinite() {
                p.put * w
            } else {
                p.universe * -(w * p.ln_keep).exp_m1()
            }
        })
        .sum::<f64>()
        .min(w)
}

/// Per partition of `parts`, the chance that a lookup of one of its keys finds the key's value in an entry
/// cache of `entries` entries (MODEL.md §2.1's level −1) that lookups fill and writes to a key empty.
///
/// Che's approximation of an LRU-like cache: the cache holds the keys read within its last t lookups, t such
/// that t draws from the read distribution reach `entries` distinct keys ([`writes_to_fill`] over the gets);
/// a key of partition j is there with chance 1 − (1 − g_j/U_j)^t. A write to the key drops it, so a read finds
/// it only if the key's previous access was a read: `reads / (reads + rewrites·p_j/g_j)` with `reads` the
/// share of operations whose read stays cached (lookups) and `rewrites` the share that overwrite a key
/// (inserts of new keys drop nothing). Every key hits when the cache holds the whole reachable universe.
pub fn cache_hit_chances(parts: &[KeyPart], entries: f64, reads: f64, rewrites: f64) -> Vec<f64> {
    if entries < 1.0 || reads <= 0.0 {
        return vec![0.0; parts.len()];
    }
    // the partitions as reads draw them, every one in the exact form (the one `writes_to_fill` solves: a
    // linear α would let t draws hold more distinct keys than the cache has room for)
    let by_reads: Vec<KeyPart> = parts
        .iter()
        .map(|p| KeyPart::new(p.universe, p.get, p.get, AlphaForm::Exact))
        .collect();
    let t = writes_to_fill(&by_reads, entries);
    parts
        .iter()
        .zip(&by_reads)
        .map(|(p, r)| {
            if p.get <= 0.0 {
                return 0.0;
            }
            let cached = match t {
                Some(t) => KeySpace::alpha(r, t),
                None => 1.0,
            };
            let read_rate = reads * p.get;
            let write_rate = rewrites * p.put;
            cached * read_rate / (read_rate + write_rate)
        })
        .collect()
}

#[cfg(test)]
mod tests;
