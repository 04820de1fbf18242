use super::*;
use cosine_design::{named_workload, OperationMix};

#[test]
fn an_entry_cache_catches_the_hot_keys_of_a_zipfian_read_workload() {
    // YCSB's zipfian (θ = 0.99) over a million keys, reads only: 5% of the keys in the cache
    let mut w = named_workload("ycsb-c").unwrap();
    w.entries = 1_000_000;
    let keys = KeySpace::from_workload(&w);
    let parts = keys.parts();
    let hits = cache_hit_chances(&parts, 50_000.0, 1.0, 0.0);
    let hit: f64 = parts.iter().zip(&hits).map(|(p, h)| p.get * h).sum();
    // Zipf's head: the 50,000 most read keys take H(50,000)/H(10^6) ≈ 0.79 of reads; an LRU keeps fewer
    assert!((0.55..0.79).contains(&hit), "{hit}");
    // the hottest partition is always cached, the coldest rarely
    assert!(hits[0] > 0.999 && *hits.last().unwrap() < 0.2, "{hits:?}");
    // writes to the read keys drop them: half the accesses writes, about half the hits
    let half = cache_hit_chances(&parts, 50_000.0, 0.5, 0.5);
    let hit_half: f64 = parts.iter().zip(&half).map(|(p, h)| p.get * h).sum();
    assert!((hit_half / hit - 0.5).abs() < 0.01, "{hit_half} vs {hit}");
    // more cache, more hits; no cache or no reads, none; a cache of every key, all
    let more: f64 = parts
        .iter()
        .zip(cache_hit_chances(&parts, 200_000.0, 1.0, 0.0))
        .map(|(p, h)| p.get * h)
        .sum();
    assert!(more > hit);
    assert!(cache_hit_chances(&parts, 0.0, 1.0, 0.0)
        .iter()
        .all(|h| *h == 0.0));
    assert!(cache_hit_chances(&parts, 1e9, 1.0, 0.0)
        .iter()
        .all(|h| *h == 1.0));
    // uniform reads over N keys: the cache's share of the universe
    let uniform = [KeyPart::new(1e6, 1.0, 1.0, AlphaForm::Linear)];
    let h = cache_hit_chances(&uniform, 50_000.0, 1.0, 0.0)[0];
    assert!((h - 0.05).abs() < 0.005, "{h}");
}

#[test]
fn harmonic_matches_direct_sum() {
    for theta in [0.5, 0.99, 1.0, 1.5] {
        for n in [10u64, 65, 1000, 50_000] {
            let direct: f64 = (1..=n).map(|r| (r as f64).powf(-theta)).sum();
            let h = harmonic(n as f64, theta);
            assert!(
                (h - direct).abs() / direct < 1e-11,
                "θ={theta} n={n}: {h} vs {direct}"
            );
        }
    }
}

#[test]
fn zipf_bins_cover_universe_and_mass() {
    let bins = zipf_bins(0.99, 1e8);
    let u: f64 = bins.iter().map(|b| b.0).sum();
    let p: f64 = bins.iter().map(|b| b.1).sum();
    assert_eq!(u, 1e8);
    assert!((p - 1.0).abs() < 1e-9);
    // the first bin (ranks 1..3) is hot: far more mass per key than the last
    assert!(bins[0].1 / bins[0].0 > 1e5 * bins.last().unwrap().1 / bins.last().unwrap().0);
}

#[test]
fn scrambled_zipf_is_flatter_and_still_sums_to_one() {
    let plain = zipf_bins(0.99, 1e5);
    let folded = scrambled_zipf_bins(0.99, 1e5, 1e10);
    let p: f64 = folded.iter().map(|b| b.1).sum();
    assert!((p - 1.0).abs() < 1e-9);
    // YCSB over 100,000 records: about half the draws land beyond the first 10^5 of 10^10 ranks
    let inside = harmonic(1e5, 0.99) / harmonic(1e10, 0.99);
    assert!(inside > 0.45 && inside < 0.55, "{inside}");
    assert!(folded[0].1 < plain[0].1 && folded.last().unwrap().1 > plain.last().unwrap().1);
    assert_eq!(scrambled_zipf_bins(0.99, 1e5, 1e5), plain);
}

#[test]
fn coupon_collector_edges() {
    assert_eq!(coupon_collector(10.0, 11.0), -1.0);
    assert_eq!(coupon_collector(10.0, 1.0), 1.0);
    assert!((coupon_collector(10.0, 10.0) - 10.0 * 10f64.ln()).abs() < 1e-12);
}

/// Partitions (U, put) for the α forms' tests: vast and tiny, a share of writes above the keys (put > U).
const PARTS: [(f64, f64); 5] = [
    (1e6, 1.0),
    (1e3, 0.25),
    (4.0, 0.5),
    (1e12, 1e-3),
    (2.0, 3.0),
];

#[test]
fn not_written_integral_is_the_integral_of_one_minus_alpha() {
    for alpha in [AlphaForm::Linear, AlphaForm::Exact] {
        for (u, put) in PARTS {
            let part = KeyPart::new(u, put, 1.0, alpha);
            for (a, b) in [(0.0, 10.0), (5.0, 5e3), (1e3, 1e7), (0.0, 1e9)] {
                // the midpoint rule over stretches growing geometrically away from a (the integrand
                // can fall from 1 to 0 within a few writes of a, or over the whole range)
                let f = |w: f64| 1.0 - KeySpace::alpha(&part, w);
                let cut = |k: usize| a + (b - a) * 10f64.powf(-12.0 + 12.0 * k as f64 / 600.0);
                let mut numeric = 0.0;
                let mut lo = a;
                for k in 0..=600 {
                    let hi = cut(k);
                    let h = (hi - lo) / 50.0;
                    numeric += (0..50).map(|i| f(lo + h * (i as f64 + 0.5))).sum::<f64>() * h;
                    lo = hi;
                }
                let closed = not_written_integral(&part, a, b);
                assert!(
                    (closed - numeric).abs() <= 1e-6 * numeric.abs() + 1e-13 * (b - a),
                    "{alpha:?} U={u} put={put} [{a}, {b}]: {closed} vs {numeric}"
                );
            }
        }
    }
}

#[test]
fn ln_not_alpha_is_the_log_of_one_minus_alpha() {
    for alpha in [AlphaForm::Linear, AlphaForm::Exact] {
        for (u, put) in PARTS {
            let part = KeyPart::new(u, put, 1.0, alpha);
            for n in [0.0, 1.0, 17.0, 1e4, 1e9] {
                let direct = (-KeySpace::alpha(&part, n)).ln_1p();
                let ours = KeySpace::ln_not_alpha(&part, n);
                if direct.is_infinite() || ours < -700.0 {
                    // α rounds to 1: both say the key is certainly there
                    assert!(
                        ours < -36.0 && direct < -36.0,
                        "{alpha:?} {u} {put} {n}: {ours} {direct}"
                    );
                } else {
                    assert!(
                        (ours - direct).abs() <= 1e-9 * direct.abs().max(1e-300),
                        "{alpha:?} U={u} put={put} n={n}: {ours} vs {direct}"
                    );
                }
            }
        }
    }
}

#[test]
fn exp_or_zero_is_exp() {
    for x in [-800.0, -745.2, -745.0, -700.0, -1.0, 0.0, 3.5] {
        assert_eq!(exp_or_zero(x), f64::exp(x), "{x}");
    }
}

#[test]
fn distinct_after_inverts_writes_to_fill() {
    let w = named_workload("ycsb-a").unwrap();
    for parts in [
        KeySpace::from_workload(&w).parts(),
        vec![KeyPart::new(1e6, 1.0, 1.0, AlphaForm::Exact)],
    ] {
        for n in [10.0, 1e3, 1e5, 5e5] {
            let w = writes_to_fill(&parts, n).unwrap();
            let d = distinct_after(&parts, w);
            assert!((d - n).abs() < 1e-6 * n, "{d} against {n}");
        }
    }
    // writes into an unbounded universe are all distinct
    let fresh = [KeyPart::new(f64::INFINITY, 1.0, 0.0, AlphaForm::Linear)];
    assert_eq!(distinct_after(&fresh, 1234.0), 1234.0);
    assert_eq!(distinct_after(&fresh, 0.0), 0.0);
}

#[test]
fn writes_to_fill_answers_each_key_space_its_own_solution() {
    // the thread's kept solutions are keyed by the parts themselves: spaces that differ in one field, asked
    // in turn for the same n (more spaces than are kept), each get what solving them afresh gives
    let spaces: Vec<Vec<KeyPart>> = (0..(FILL_SPACES + 3))
        .map(|i| {
            vec![
                KeyPart::new(1e3 * (i + 1) as f64, 0.6, 0.5, AlphaForm::Exact),
                KeyPart::new(1e6, 0.4, 0.5, AlphaForm::Exact),
            ]
        })
        .collect();
    for round in 0..3 {
        for (i, p) in spaces.iter().enumerate() {
            for n in [10.0, 1e3, 5e4 + round as f64] {
                assert_eq!(
                    writes_to_fill(p, n),
                    solve_writes_to_fill(p, n),
                    "space {i}, n {n}"
                );
            }
        }
    }
    assert_ne!(
        writes_to_fill(&spaces[0], 1e3),
        writes_to_fill(&spaces[1], 1e3)
    );
}

#[test]
fn writes_to_fill_agrees_with_uniform_collector() {
    let parts = [KeyPart::new(1e6, 1.0, 1.0, AlphaForm::Exact)];
    let w = writes_to_fill(&parts, 5e5).unwrap();
    let cc = coupon_collector(1e6, 5e5);
    assert!((w - cc).abs() / cc < 1e-3, "{w} vs {cc}");
    assert!(writes_to_fill(&parts, 2e6).is_none());
}

#[test]
fn ycsb_a_is_partitioned_with_equal_get_and_put() {
    let w = named_workload("ycsb-a").unwrap();
    match KeySpace::from_workload(&w) {
        KeySpace::Parts(p) => {
            assert!(p.len() > 5);
            assert!(p.iter().all(|x| (x.get - x.put).abs() < 1e-12));
        }
        other => panic!("{other:?}"),
    }
    let u = Workload::with_mix(OperationMix {
        lookup: 1.0,
        ..Default::default()
    });
    assert_eq!(
        KeySpace::from_workload(&u),
        KeySpace::Uniform { universe: 1e9 }
    );
}
