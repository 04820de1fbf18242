//! What no cache can beat: under a workload's request distribution, the share of requests that go to the `k`
//! most requested records. A cache of `k` records (any engine's, the page cache included, however clever its
//! policy) answers at most that share, so at least the rest of the point reads reach the device. It bounds
//! what an engine can gain over another by caching at a given memory: the harness's YCSB zipfian is scrambled
//! over 10^10 items (as YCSB's is), which spreads much of its mass evenly over the keys.

use crate::workload::{CoreWorkload, Distribution};
use crate::{fnv64, ZIPF_ITEMS};

/// Ranks of the scrambled zipfian summed one by one (at least this many, and at least
/// [`EXACT_RANKS_PER_RECORD`] a record); the mass of the ranks past them is spread evenly over the keys (each
/// key gathers thousands of them, each far lighter than the records' own top ranks).
const EXACT_RANKS: u64 = 20_000_000;
/// Ranks summed one by one per record, when that is more than [`EXACT_RANKS`].
const EXACT_RANKS_PER_RECORD: u64 = 40;

/// Σ_{r = a+1}^{b} r^-θ by Euler-Maclaurin (the integral, the end corrections and the first derivative term):
/// relative error far below 1e-9 for a ≥ 1000.
fn zeta_between(a: f64, b: f64, theta: f64) -> f64 {
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
    integral - f(a) / 2.0 + f(b) / 2.0 + (df(b) - df(a)) / 12.0
}

/// Σ_{r = 1}^{n} r^-θ: summed exactly up to 1,000 (or n), by [`zeta_between`] beyond.
fn zeta(n: f64, theta: f64) -> f64 {
    let exact = n.min(1000.0) as u64;
    let head: f64 = (1..=exact).map(|r| (r as f64).powf(-theta)).sum();
    if n > exact as f64 {
        head + zeta_between(exact as f64, n, theta)
    } else {
        head
    }
}

/// Each record's share of the requests of YCSB's scrambled zipfian over `records` records: rank r (1 … 10^10,
/// with probability r^-θ over their sum) requests record fnv64(r) mod `records`.
pub fn scrambled_zipfian_masses(records: u64, theta: f64) -> Vec<f64> {
    let n = records.max(1);
    let total = zeta(ZIPF_ITEMS, theta);
    let exact = EXACT_RANKS
        .max(EXACT_RANKS_PER_RECORD.saturating_mul(n))
        .min(ZIPF_ITEMS as u64);
    let mut mass = vec![0.0f64; n as usize];
    for r in 1..=exact {
        mass[(fnv64(r) % n) as usize] += (r as f64).powf(-theta) / total;
    }
    let tail = if (exact as f64) < ZIPF_ITEMS {
        zeta_between(exact as f64, ZIPF_ITEMS, theta) / total
    } else {
        0.0
    };
    for m in &mut mass {
        *m += tail / n as f64;
    }
    mass
}

/// The share of a workload's keyed requests that go to its `k` most requested records, for each `k` in
/// `cached` (over the records loaded and inserted before the run, `records`): the most a cache of `k` records
/// can answer. Uniform: k / records. Latest: the k newest records' share, Σ_{r ≤ k} r^-θ over Σ_{r ≤ records}
/// (the harness's recency zipfian, not scrambled). Zipfian: the sum of the k largest
/// [`scrambled_zipfian_masses`].
pub fn top_share(distribution: Distribution, theta: f64, records: u64, cached: &[u64]) -> Vec<f64> {
    let n = records.max(1);
    match distribution {
        Distribution::Uniform => cached
            .iter()
            .map(|&k| (k.min(n) as f64) / n as f64)
            .collect(),
        Distribution::Latest => {
            let all = zeta(n as f64, theta);
            cached
                .iter()
                .map(|&k| zeta(k.min(n) as f64, theta) / all)
                .collect()
        }
        Distribution::Zipfian => {
            let mut mass = scrambled_zipfian_masses(n, theta);
            mass.sort_unstable_by(|a, b| b.total_cmp(a));
            let mut prefix = Vec::with_capacity(mass.len() + 1);
            prefix.push(0.0);
            let mut sum = 0.0;
            for m in &mass {
                sum += m;
                prefix.push(sum);
            }
            cached
                .iter()
                .map(|&k| prefix[k.min(n) as usize].min(1.0))
                .collect()
        }
    }
}

/// The device-read floor of a workload under a memory of `memory_bytes` used whole as a perfect cache of
/// records (no index, no filters, no engine, no client: more than any engine has): the records it holds, the
/// share of point reads it answers at most, and the point reads an operation that must reach the device
/// (reads and read-modify-writes; blind writes and inserts read nothing; scans are not bounded here).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadFloor {
    /// Records a cache of the memory holds (key and value bytes only).
    pub cached_records: u64,
    /// The most of the point reads such a cache answers.
    pub hit_ceiling: f64,
    /// Point reads an operation that reach the device at least.
    pub device_reads_per_op: f64,
}

/// [`ReadFloor`] of workload `w` over `records` records at `memory_bytes`.
pub fn read_floor(w: &CoreWorkload, records: u64, memory_bytes: u64) -> ReadFloor {
    // "user" and up to 20 digits of the hashed record number; the fields
    let record_bytes = 4 + 20 + u64::from(w.field_count) * u64::from(w.field_length);
    let cached_records = (memory_bytes / record_bytes.max(1)).min(records);
    let hit_ceiling = top_share(
        w.distribution,
        w.zipfian_constant,
        records,
        &[cached_records],
    )[0];
    ReadFloor {
        cached_records,
        hit_ceiling,
        device_reads_per_op: (w.read + w.read_modify_write) * (1.0 - hit_ceiling),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyChooser;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn zeta_matches_the_sum_it_stands_for() {
        for theta in [0.5, 0.99, 1.0, 1.2] {
            for n in [10.0, 1000.0, 5000.0, 200_000.0] {
                let exact: f64 = (1..=n as u64).map(|r| (r as f64).powf(-theta)).sum();
                let z = zeta(n, theta);
                assert!(
                    (z - exact).abs() < 1e-9 * exact,
                    "θ {theta} n {n}: {z} {exact}"
                );
            }
        }
        // YCSB's own constant for 10^10 items at θ = 0.99 (ZipfianGenerator's ZETAN)
        assert!((zeta(ZIPF_ITEMS, 0.99) - 26.469_028_201_783_02).abs() < 1e-6);
    }

    /// The masses are the chooser's: the share of 400,000 draws of the harness's own key chooser that land on
    /// the 100 and 2,000 most requested records matches the computed shares within sampling error.
    #[test]
    fn the_masses_are_what_the_harness_draws() {
        let records = 50_000u64;
        let mass = scrambled_zipfian_masses(records, 0.99);
        assert!((mass.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let mut order: Vec<usize> = (0..mass.len()).collect();
        order.sort_unstable_by(|&a, &b| mass[b].total_cmp(&mass[a]));
        let mut w = CoreWorkload::named("ycsb-c").expect("ycsb-c");
        w.record_count = records;
        let chooser = KeyChooser::new(&w);
        let mut rng = StdRng::seed_from_u64(7);
        let draws = 400_000u64;
        let mut hits = vec![0u64; records as usize];
        for _ in 0..draws {
            hits[chooser.next(&mut rng, records) as usize] += 1;
        }
        for k in [100usize, 2_000] {
            let want: f64 = order[..k].iter().map(|&i| mass[i]).sum();
            let got = order[..k].iter().map(|&i| hits[i]).sum::<u64>() as f64 / draws as f64;
            // four standard errors of a share of 400,000 draws
            let se = (want * (1.0 - want) / draws as f64).sqrt();
            assert!(
                (got - want).abs() < 4.0 * se,
                "top {k}: drawn {got}, computed {want}"
            );
        }
        let shares = top_share(
            Distribution::Zipfian,
            0.99,
            records,
            &[0, 100, 2_000, records],
        );
        assert_eq!(shares[0], 0.0);
        assert!(shares[1] < shares[2] && shares[2] < shares[3]);
        assert!((shares[3] - 1.0).abs() < 1e-9);
    }

    /// 600,000 records of 1 KB under a 128 MiB memory (the capped peer table's): no cache of the whole cap
    /// answers more than about 60% of YCSB-B's reads, so at least 0.38 of its operations read the device.
    #[test]
    fn the_capped_tables_floor() {
        let b = CoreWorkload::named("ycsb-b").expect("ycsb-b");
        let f = read_floor(&b, 600_000, 128 << 20);
        assert_eq!(f.cached_records, (128u64 << 20) / 1024);
        assert!((0.55..0.65).contains(&f.hit_ceiling), "{f:?}");
        assert!((0.33..0.43).contains(&f.device_reads_per_op), "{f:?}");
        // recency skew is far steeper (the newest records are the cache's)
        let d = CoreWorkload::named("ycsb-d").expect("ycsb-d");
        let fd = read_floor(&d, 600_000, 128 << 20);
        assert!(fd.hit_ceiling > 0.85, "{fd:?}");
        let uniform = top_share(Distribution::Uniform, 0.99, 1000, &[250]);
        assert_eq!(uniform, vec![0.25]);
    }
}
