//! Latin-hypercube sampling: `n` points of the unit cube such that, on every axis, each of the `n` equal strata
//! holds exactly one point (McKay, Beckman and Conover 1979). Spreads few measured runs over many knobs better
//! than independent uniform draws, which leave strata of an axis empty and others doubled.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// `n` points in `[0, 1]^dim`, one per stratum on every axis, from `seed`.
pub fn latin_hypercube(n: usize, dim: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut points = vec![vec![0.0; dim]; n];
    for axis in 0..dim {
        let mut strata: Vec<usize> = (0..n).collect();
        strata.shuffle(&mut rng);
        for (p, s) in points.iter_mut().zip(strata) {
            p[axis] = (s as f64 + rng.random::<f64>()) / n as f64;
        }
    }
    points
}

/// Points in blocks: the first `n` points of a sequence of Latin hypercubes of `block` points each (block `b`
/// drawn from `seed + b`), so that asking for more points keeps the ones asked for before (a collection that
/// grows resumes) while each block stays stratified.
pub fn latin_blocks(n: usize, dim: usize, block: usize, seed: u64) -> Vec<Vec<f64>> {
    let block = block.max(1);
    (0..n.div_ceil(block))
        .flat_map(|b| latin_hypercube(block, dim, seed.wrapping_add(b as u64)))
        .take(n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_point_per_stratum_on_every_axis() {
        let n = 37;
        let pts = latin_hypercube(n, 5, 9);
        assert_eq!(pts.len(), n);
        for axis in 0..5 {
            let mut seen = vec![false; n];
            for p in &pts {
                assert!((0.0..1.0).contains(&p[axis]));
                let s = (p[axis] * n as f64) as usize;
                assert!(!seen[s], "stratum {s} of axis {axis} twice");
                seen[s] = true;
            }
        }
        assert_eq!(
            latin_hypercube(n, 5, 9),
            pts,
            "the same seed, the same points"
        );
        assert_ne!(latin_hypercube(n, 5, 10), pts);
    }

    #[test]
    fn blocks_keep_their_prefix() {
        let a = latin_blocks(5, 3, 4, 1);
        let b = latin_blocks(11, 3, 4, 1);
        assert_eq!(a.len(), 5);
        assert_eq!(b.len(), 11);
        assert_eq!(&b[..5], &a[..]);
        assert_eq!(&b[..4], &latin_hypercube(4, 3, 1)[..]);
    }
}
