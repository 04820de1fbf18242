//! Keys as YCSB makes and requests them: record `n`'s key ([`key`], hashed order through [`fnv64`]) and the
//! request-key choosers (uniform, scrambled zipfian, latest: [`KeyChooser`]).

use crate::workload::{CoreWorkload, Distribution};
use rand::rngs::StdRng;
use rand::Rng;
use rand_distr::{Distribution as _, Zipf};

/// YCSB's scrambled zipfian draws ranks from this many items before hashing them onto the key space.
pub const ZIPF_ITEMS: f64 = 10_000_000_000.0;

/// FNV-1a 64 (YCSB's `fnvhash64`), for hashed key order and the scrambled zipfian.
pub fn fnv64(x: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The key of record `n`: "user" followed by hash(n) (hashed order) or n.
pub fn key(n: u64, hashed: bool) -> Vec<u8> {
    format!("user{}", if hashed { fnv64(n) } else { n }).into_bytes()
}

/// Chooses request keys as YCSB does.
pub struct KeyChooser {
    dist: Distribution,
    zipf_items: Option<Zipf<f64>>,
    theta: f64,
}

impl KeyChooser {
    /// A chooser for a workload.
    pub fn new(w: &CoreWorkload) -> Self {
        let zipf_items = match w.distribution {
            Distribution::Zipfian => Zipf::new(ZIPF_ITEMS, w.zipfian_constant).ok(),
            _ => None,
        };
        KeyChooser {
            dist: w.distribution,
            zipf_items,
            theta: w.zipfian_constant,
        }
    }

    /// A record number among the `inserted` records so far.
    pub fn next(&self, rng: &mut StdRng, inserted: u64) -> u64 {
        let n = inserted.max(1);
        match self.dist {
            Distribution::Uniform => rng.random_range(0..n),
            Distribution::Zipfian => {
                let rank = self.zipf_items.as_ref().map_or(0.0, |z| z.sample(rng)) as u64;
                fnv64(rank) % n
            }
            Distribution::Latest => {
                let rank = Zipf::new(n as f64, self.theta)
                    .map(|z| z.sample(rng) as u64)
                    .unwrap_or(1);
                n - rank.clamp(1, n)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::CoreWorkload;
    use rand::SeedableRng;

    #[test]
    fn zipfian_is_skewed_and_latest_favours_new_records() {
        let mut rng = StdRng::seed_from_u64(1);
        let z = KeyChooser::new(&CoreWorkload::named("a").unwrap());
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.next(&mut rng, 1000) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        assert!(
            counts[0] > 20 * counts[500].max(1),
            "top {} vs median {}",
            counts[0],
            counts[500]
        );
        let l = KeyChooser::new(&CoreWorkload::named("d").unwrap());
        let recent = (0..10_000)
            .filter(|_| l.next(&mut rng, 1_000_000) > 999_000)
            .count();
        assert!(recent > 5_000, "{recent}");
    }
}
