//! twemproxy's ketama ring, reproduced: where its points fall, which shard a key goes to, and what share of the
//! key space each shard holds.
//!
//! twemproxy (nutcracker 0.4-0.5, `nc_ketama.c`) gives each server `floor(w / W · 40 · n) · 4` points (w its
//! weight, W the pool's total, n the live servers, computed in `float`), named `"<server name>-<i>"`; each name's
//! MD5 digest yields four 32-bit points (little-endian words). A key goes to the first point at or after its hash,
//! wrapping to the first point. The key's hash is the pool's `hash:` function. The arithmetic here follows the
//! same steps, so [`Ring::owner`] names the shard nutcracker picks (the deployment tests check this key by key
//! against a running nutcracker).

use md5::{Digest, Md5};

/// Points per server on average (`KETAMA_POINTS_PER_SERVER`).
const POINTS_PER_SERVER: f32 = 160.0;

/// A key hash of twemproxy's `hash:` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHash {
    /// `md5`: the first four bytes of the key's MD5 digest, little-endian. Uniform over any key shape; the
    /// deployments this crate writes use it.
    Md5,
    /// `fnv1a_64` as twemproxy computes it: FNV-1a in 32 bits with the 64-bit constants truncated, so the
    /// multiplier is 0x1b3. Keys that differ in their last characters land next to each other on the ring: with
    /// `user:1..3000` over nine shards the busiest held 2.4× its share. Kept to show why it is not used.
    Fnv1a64,
}

impl KeyHash {
    /// The name in a twemproxy configuration.
    pub fn name(self) -> &'static str {
        match self {
            KeyHash::Md5 => "md5",
            KeyHash::Fnv1a64 => "fnv1a_64",
        }
    }

    /// Parses a twemproxy `hash:` value (the ones reproduced here).
    pub fn parse(s: &str) -> Option<KeyHash> {
        match s {
            "md5" => Some(KeyHash::Md5),
            "fnv1a_64" => Some(KeyHash::Fnv1a64),
            _ => None,
        }
    }

    /// The key's position on the ring.
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            KeyHash::Md5 => md5_word(key, 0),
            KeyHash::Fnv1a64 => {
                let mut h = 0xcbf2_9ce4_8422_2325_u64 as u32;
                for &b in key {
                    // twemproxy widens a (signed) char: bytes above 0x7f sign-extend
                    h ^= b as i8 as i32 as u32;
                    h = h.wrapping_mul(0x0000_0100_0000_01b3_u64 as u32);
                }
                h
            }
        }
    }
}

/// The `word`-th little-endian 32-bit word of `data`'s MD5 digest.
fn md5_word(data: &[u8], word: usize) -> u32 {
    let d = Md5::digest(data);
    u32::from_le_bytes([
        d[word * 4],
        d[word * 4 + 1],
        d[word * 4 + 2],
        d[word * 4 + 3],
    ])
}

/// One server of a pool: its name on the ring and its weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The name after the weight in the configuration (`host:port:weight name`).
    pub name: String,
    /// The weight.
    pub weight: u32,
}

/// A ketama ring over a pool's servers.
#[derive(Clone, Debug)]
pub struct Ring {
    /// (point, server index), sorted by point.
    points: Vec<(u32, usize)>,
    servers: usize,
    hash: KeyHash,
}

/// How many points nutcracker gives a server of weight `weight` in a pool of `total` weight and `servers` live
/// servers, with its `float` arithmetic.
pub fn points_of(weight: u32, total: u32, servers: usize) -> u32 {
    let pct = weight as f32 / total as f32;
    let x = pct * POINTS_PER_SERVER / 4.0 * servers as f32;
    // C: floorf((float)(x + 0.0000000001)): the sum is a double, converted back to float
    let quads = ((x as f64 + 0.000_000_000_1) as f32).floor();
    quads as u32 * 4
}

impl Ring {
    /// The ring nutcracker builds for these servers (all live) and key hash.
    pub fn new(members: &[Member], hash: KeyHash) -> Ring {
        // twemproxy sums in 32 bits; configurations read back keep weights small enough (MAX_WEIGHT)
        let total = members.iter().fold(0u32, |t, m| t.saturating_add(m.weight));
        let mut points = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let n = points_of(m.weight, total.max(1), members.len());
            points.extend(name_points(&m.name, n / 4).into_iter().map(|v| (v, i)));
        }
        // qsort by value; equal values (2^-32 apart odds) are ordered by server here
        points.sort_unstable();
        Ring {
            points,
            servers: members.len(),
            hash,
        }
    }

    /// The key hash.
    pub fn key_hash(&self) -> KeyHash {
        self.hash
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the ring has no points (every weight 0).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The server a hash goes to: the first point at or after it, wrapping.
    pub fn owner_of_hash(&self, h: u32) -> Option<usize> {
        if self.points.is_empty() {
            return None;
        }
        let i = self.points.partition_point(|&(v, _)| v < h);
        Some(self.points[if i == self.points.len() { 0 } else { i }].1)
    }

    /// The server a key goes to.
    pub fn owner(&self, key: &[u8]) -> Option<usize> {
        self.owner_of_hash(self.hash.hash(key))
    }

    /// Each server's share of the 2^32 hashes (what a uniform key hash gives it).
    pub fn shares(&self) -> Vec<f64> {
        let mut s = vec![0.0; self.servers];
        let Some(&(last, _)) = self.points.last() else {
            return s;
        };
        let mut prev = last as i64 - (1i64 << 32);
        for &(v, i) in &self.points {
            s[i] += (v as i64 - prev) as f64;
            prev = v as i64;
        }
        s.iter().map(|x| x / (1u64 << 32) as f64).collect()
    }

    /// The share of hashes whose owner is `i` here and `j` in `other`, for every (i, j): the keys a change of
    /// pool moves from server i to server j (a uniform key hash assumed).
    pub fn moves_to(&self, other: &Ring) -> Vec<Vec<f64>> {
        let mut m = vec![vec![0.0; other.servers]; self.servers];
        let mut cuts: Vec<u32> = self
            .points
            .iter()
            .chain(&other.points)
            .map(|&(v, _)| v)
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let Some(&last) = cuts.last() else {
            return m;
        };
        // every hash in (prev, cut] has one owner in each ring: the owner of `cut`
        let mut prev = last as i64 - (1i64 << 32);
        for &c in &cuts {
            if let (Some(a), Some(b)) = (self.owner_of_hash(c), other.owner_of_hash(c)) {
                m[a][b] += (c as i64 - prev) as f64 / (1u64 << 32) as f64;
            }
            prev = c as i64;
        }
        m
    }
}

/// The points of one name, in nutcracker's order: `"<name>-<i>"`'s four MD5 words for i = 0, 1, ...
fn name_points(name: &str, quads: u32) -> Vec<u32> {
    (0..quads)
        .flat_map(|p| {
            let d = Md5::digest(format!("{name}-{p}").as_bytes());
            (0..4).map(move |w| {
                u32::from_le_bytes([d[w * 4], d[w * 4 + 1], d[w * 4 + 2], d[w * 4 + 3]])
            })
        })
        .collect()
}

/// Every point each server could have (up to a cap of quads), sorted once: a ring for given quad counts is the
/// points whose quad index is below their server's count, so shares need one pass and no sort.
struct Candidates {
    /// (point, server, quad index), sorted by point.
    points: Vec<(u32, usize, u32)>,
    servers: usize,
}

impl Candidates {
    fn new(names: &[String], cap: u32) -> Candidates {
        let mut points: Vec<(u32, usize, u32)> = names
            .iter()
            .enumerate()
            .flat_map(|(i, n)| {
                name_points(n, cap)
                    .into_iter()
                    .enumerate()
                    .map(move |(k, v)| (v, i, k as u32 / 4))
            })
            .collect();
        points.sort_unstable();
        Candidates {
            points,
            servers: names.len(),
        }
    }

    fn replace(&mut self, server: usize, name: &str, cap: u32) {
        self.points.retain(|p| p.1 != server);
        self.points.extend(
            name_points(name, cap)
                .into_iter()
                .enumerate()
                .map(|(k, v)| (v, server, k as u32 / 4)),
        );
        self.points.sort_unstable();
    }

    fn shares(&self, quads: &[u32]) -> Vec<f64> {
        let mut s = vec![0.0; self.servers];
        let live = |&&(_, i, q): &&(u32, usize, u32)| q < quads[i];
        let Some(&(last, _, _)) = self.points.iter().rev().find(live) else {
            return s;
        };
        let mut prev = last as i64 - (1i64 << 32);
        for &(v, i, _) in self.points.iter().filter(live) {
            s[i] += (v as i64 - prev) as f64;
            prev = v as i64;
        }
        s.iter().map(|x| x / (1u64 << 32) as f64).collect()
    }

    /// Moves one quad at a time from one server to another while the worst relative error (then the sum of
    /// squared errors) falls.
    fn descend(&self, quads: &mut [u32], targets: &[f64]) -> (f64, f64) {
        let n = quads.len();
        let mut err = share_error(&self.shares(quads), targets);
        loop {
            // first the moves to or from the worst server; all moves only when none of those helps
            let shares = self.shares(quads);
            let worst = (0..n)
                .max_by(|&a, &b| {
                    (shares[a] / targets[a] - 1.0)
                        .abs()
                        .total_cmp(&(shares[b] / targets[b] - 1.0).abs())
                })
                .unwrap_or(0);
            let mut best: Option<((f64, f64), usize, usize)> = None;
            for pass in 0..2 {
                if pass == 1 && best.is_some() {
                    break;
                }
                for from in 0..n {
                    if quads[from] <= 1 {
                        continue;
                    }
                    for to in 0..n {
                        if to == from || (pass == 0 && from != worst && to != worst) {
                            continue;
                        }
                        quads[from] -= 1;
                        quads[to] += 1;
                        let e = share_error(&self.shares(quads), targets);
                        quads[from] += 1;
                        quads[to] -= 1;
                        if e < best.map_or(err, |b| b.0) {
                            best = Some((e, from, to));
                        }
                    }
                }
            }
            match best {
                Some((e, from, to)) => {
                    quads[from] -= 1;
                    quads[to] += 1;
                    err = e;
                }
                None => return err,
            }
        }
    }
}

/// The worst relative error of shares against targets, and the sum of squared errors (to break ties).
fn share_error(shares: &[f64], targets: &[f64]) -> (f64, f64) {
    shares
        .iter()
        .zip(targets)
        .fold((0.0, 0.0), |(m, s), (x, t)| {
            let e = (x / t - 1.0).abs();
            (f64::max(m, e), s + e * e)
        })
}

/// What [`tune_weights`] chose.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned {
    /// The servers' names (a renamable server may get a suffix `.<k>` that places its points better).
    pub names: Vec<String>,
    /// The weights.
    pub weights: Vec<u32>,
    /// The worst relative error of a server's share of the ring against its target share.
    pub error: f64,
}

/// Names and weights that make each server's share of the ring its target share (targets in any unit).
///
/// The ring's points are random, so weights in proportion to the targets leave the worst server's share off by
/// 4% to 20% at 160 points a server (3 to 32 equal servers named `shard-<i>`; the more servers, the worse). nutcracker gives a pool about 40 groups of four points a server in all, split by
/// weight; this picks how many groups each server gets (moving one group at a time from one server to another
/// while the worst relative error falls), then weights that make nutcracker give exactly those counts. A small
/// server has few groups, each a large part of its share; while the worst server is off by more than 2% and
/// `renamable` allows, other names (`<name>.<k>`) are tried for it, since a name only places points. Kept names
/// (of servers that hold keys already) are never changed.
pub fn tune_weights(names: &[String], renamable: &[bool], targets: &[f64], hash: KeyHash) -> Tuned {
    let n = names.len();
    let sum: f64 = targets.iter().sum();
    if n == 0 || sum <= 0.0 {
        return Tuned {
            names: names.to_vec(),
            weights: vec![1; n],
            error: 0.0,
        };
    }
    let targets: Vec<f64> = targets.iter().map(|t| t / sum).collect();
    // weights 2q + 1 make nutcracker's 40·n·w/W land at q + 1/2 when Σq = 40n − n/2 (rounded up)
    let total = (40 * n - n.div_ceil(2)) as u32;
    let mut quads: Vec<u32> = targets
        .iter()
        .map(|t| ((t * total as f64).round() as u32).max(1))
        .collect();
    while quads.iter().sum::<u32>() > total {
        let i = (0..n).max_by_key(|&i| quads[i]).unwrap_or(0);
        quads[i] -= 1;
    }
    while quads.iter().sum::<u32>() < total {
        let i = (0..n)
            .max_by(|&a, &b| {
                (targets[a] / quads[a] as f64).total_cmp(&(targets[b] / quads[b] as f64))
            })
            .unwrap_or(0);
        quads[i] += 1;
    }
    let cap = (quads.iter().max().copied().unwrap_or(1) * 2 + 8).min(total);
    let mut names = names.to_vec();
    let mut cands = Candidates::new(&names, cap);
    let mut err = cands.descend(&mut quads, &targets);
    let mut tried = vec![false; n];
    while err.0 > 0.02 {
        let shares = cands.shares(&quads);
        let Some(worst) = (0..n)
            .filter(|&i| renamable.get(i).copied().unwrap_or(false) && !tried[i])
            .max_by(|&a, &b| {
                (shares[a] / targets[a] - 1.0)
                    .abs()
                    .total_cmp(&(shares[b] / targets[b] - 1.0).abs())
            })
        else {
            break;
        };
        tried[worst] = true;
        let base = names[worst].clone();
        let mut best = (err, names[worst].clone(), quads.clone());
        for k in 1..=24 {
            let name = format!("{base}.{k}");
            if names.contains(&name) {
                continue;
            }
            cands.replace(worst, &name, cap);
            let mut q = quads.clone();
            let e = cands.descend(&mut q, &targets);
            if e < best.0 {
                best = (e, name, q);
            }
        }
        cands.replace(worst, &best.1, cap);
        names[worst] = best.1;
        quads = best.2;
        err = best.0;
    }
    let weights: Vec<u32> = quads.iter().map(|&q| q * 2 + 1).collect();
    let members: Vec<Member> = names
        .iter()
        .zip(&weights)
        .map(|(name, &weight)| Member {
            name: name.clone(),
            weight,
        })
        .collect();
    let error = share_error(&Ring::new(&members, hash).shares(), &targets).0;
    Tuned {
        names,
        weights,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(weights: &[u32]) -> Vec<Member> {
        weights
            .iter()
            .enumerate()
            .map(|(i, &w)| Member {
                name: format!("shard-{i}"),
                weight: w,
            })
            .collect()
    }

    #[test]
    fn points_follow_nutcrackers_float_arithmetic() {
        // equal weights: 160 each
        assert_eq!(points_of(1, 3, 3), 160);
        // 16/32/64 GiB: 0.1428 * 40 * 3 = 17.14 quads -> 68 points
        assert_eq!(points_of(16, 112, 3), 68);
        assert_eq!(points_of(64, 112, 3), 272);
        let ring = Ring::new(&members(&[16, 32, 64]), KeyHash::Md5);
        assert_eq!(ring.len(), 68 + 136 + 272);
    }

    #[test]
    fn shares_sum_to_one_and_owner_agrees_with_shares() {
        let ring = Ring::new(&members(&[1, 2, 3, 4]), KeyHash::Md5);
        let shares = ring.shares();
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let mut counts = [0usize; 4];
        for i in 0..200_000 {
            counts[ring.owner(format!("k{i}").as_bytes()).unwrap()] += 1;
        }
        for (c, s) in counts.iter().zip(&shares) {
            let got = *c as f64 / 200_000.0;
            assert!((got - s).abs() < 0.01, "{counts:?} against {shares:?}");
        }
    }

    #[test]
    fn fnv1a_64_clusters_similar_keys() {
        // twemproxy's 32-bit FNV with multiplier 0x1b3: user:1230 .. user:1239 lie within a few thousand
        // hashes of each other out of 2^32
        let hs: Vec<u32> = (0..10)
            .map(|d| KeyHash::Fnv1a64.hash(format!("user:123{d}").as_bytes()))
            .collect();
        let spread = hs.iter().max().unwrap() - hs.iter().min().unwrap();
        assert!(spread < 1 << 16, "{hs:?}");
        let md5: Vec<u32> = (0..10)
            .map(|d| KeyHash::Md5.hash(format!("user:123{d}").as_bytes()))
            .collect();
        assert!(md5.iter().max().unwrap() - md5.iter().min().unwrap() > 1 << 28);
    }

    #[test]
    fn tuned_weights_give_each_shard_its_share() {
        let names: Vec<String> = (0..9).map(|i| format!("shard-{i}")).collect();
        let targets = [16.0, 16.0, 32.0, 32.0, 32.0, 64.0, 64.0, 128.0, 8.0];
        let total: f64 = targets.iter().sum();
        let t = tune_weights(&names, &[true; 9], &targets, KeyHash::Md5);
        let err = t.error;
        assert!(err < 0.02, "worst share off by {err}");
        let m: Vec<Member> = t
            .names
            .iter()
            .zip(&t.weights)
            .map(|(n, &w)| Member {
                name: n.clone(),
                weight: w,
            })
            .collect();
        for (s, t) in Ring::new(&m, KeyHash::Md5).shares().iter().zip(targets) {
            assert!((s / (t / total) - 1.0).abs() <= err + 1e-12);
        }
        // untuned weights in proportion to memory are off by more
        let plain: Vec<Member> = names
            .iter()
            .zip(targets)
            .map(|(n, t)| Member {
                name: n.clone(),
                weight: t as u32,
            })
            .collect();
        let plain_err = Ring::new(&plain, KeyHash::Md5)
            .shares()
            .iter()
            .zip(targets)
            .map(|(s, t)| (s / (t / total) - 1.0).abs())
            .fold(0.0, f64::max);
        assert!(plain_err > err, "{plain_err} against {err}");
    }

    #[test]
    fn adding_a_server_moves_about_its_share() {
        let three = Ring::new(&members(&[1, 1, 1]), KeyHash::Md5);
        let four = Ring::new(&members(&[1, 1, 1, 1]), KeyHash::Md5);
        let m = three.moves_to(&four);
        let moved: f64 = (0..3)
            .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i][j])
            .sum();
        // every moved hash goes to the new server, about a quarter of them
        assert!((0..3).all(|i| (0..3).all(|j| i == j || m[i][j] == 0.0)));
        assert!((moved - 0.25).abs() < 0.08, "{moved}");
        let total: f64 = m.iter().flatten().sum();
        assert!((total - 1.0).abs() < 1e-9);
    }
}
