//! Engine operations on each shape: put, get (hit and miss) and a 100-entry scan over 1M entries of 16-byte
//! keys and 100-byte values. Besides the times, prints the I/Os per operation that `stats()` counted.
//!
//! `cargo bench -p cosine-benches --bench engine` (set COSINE_BENCH_ENTRIES to change the 1M).

use cosine_engine::{Design, Engine, Options, SyncMode};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use rand::{Rng, SeedableRng};

fn entries() -> u64 {
    std::env::var("COSINE_BENCH_ENTRIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000)
}

fn key(i: u64) -> [u8; 16] {
    // scrambled so that inserts arrive in random key order
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

fn shapes(n: u64) -> Vec<(&'static str, Design)> {
    let bits10 = n * 10 / 8;
    let all_fences = n * 64 / 30; // ~30 entries per 4 KiB block, ~64 B per fence in memory
    let rocks = Design {
        block_bytes: 4096,
        ..Design::rocksdb_like(4 << 20, bits10, all_fences)
    };
    let tiered = Design {
        block_bytes: 4096,
        ..Design::tiered(4, 4 << 20, bits10, all_fences)
    };
    let btree = Design {
        block_bytes: 16 << 10,
        ..Design::wiredtiger_like(4 << 20, 16 << 10)
    };
    let lsh = Design::lsh_like(16 << 20, n * 24);
    let hybrid = Design::hybrid(8, 4 << 20, bits10, all_fences / 2);
    vec![
        ("rocksdb-like", rocks),
        ("tiered", tiered),
        ("btree-like", btree),
        ("lsh-like", lsh),
        ("hybrid", hybrid),
    ]
}

fn load(design: &Design, n: u64) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open_with(dir.path(), design, Options::with_sync(SyncMode::Never)).unwrap();
    let value = [7u8; 100];
    for i in 0..n {
        e.put(&key(i), &value).unwrap();
    }
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    (dir, e)
}

fn engine(c: &mut Criterion) {
    let n = entries();
    for (name, design) in shapes(n) {
        let t = std::time::Instant::now();
        let (_dir, e) = load(&design, n);
        let s = e.stats();
        eprintln!(
            "{name}: loaded {n} entries in {:.1} s: {} levels ({} cold), write amplification {:.2}, memory: buffer {} B, filters {} B, fences {} B (budget {} B)",
            t.elapsed().as_secs_f64(),
            s.levels.len(),
            s.levels.iter().filter(|l| !l.hot).count(),
            s.write_amplification,
            s.memory.buffer_bytes,
            s.memory.filter_bytes,
            s.memory.fence_bytes,
            s.memory.budget_bytes
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut g = c.benchmark_group(format!("engine/{name}"));
        g.sample_size(20);
        let before = e.stats();
        let mut hits = 0u64;
        g.bench_function("get-hit", |b| {
            b.iter(|| {
                hits += 1;
                black_box(e.get(&key(rng.random_range(0..n))).unwrap())
            })
        });
        let after_hits = e.stats();
        let mut misses = 0u64;
        g.bench_function("get-miss", |b| {
            b.iter(|| {
                misses += 1;
                black_box(e.get(&key(n + rng.random_range(0..n))).unwrap())
            })
        });
        let after_misses = e.stats();
        let mut scans = 0u64;
        g.bench_function("scan-100", |b| {
            b.iter(|| {
                scans += 1;
                let start = key(rng.random_range(0..n)).to_vec();
                black_box(e.scan(start.., 100).unwrap())
            })
        });
        let after_scans = e.stats();
        let mut next = 2 * n;
        g.bench_function("put", |b| {
            b.iter_batched(
                || {
                    next += 1;
                    key(next)
                },
                |k| e.put(&k, &[9u8; 100]).unwrap(),
                BatchSize::SmallInput,
            )
        });
        g.finish();
        let per = |a: &cosine_engine::Stats, b: &cosine_engine::Stats, ops: u64| {
            let ops = ops.max(1) as f64;
            (
                (b.block_reads() - a.block_reads()) as f64 / ops,
                (b.index_reads() - a.index_reads()) as f64 / ops,
                (b.false_positives() - a.false_positives()) as f64 / ops,
            )
        };
        let (h, hi, _) = per(&before, &after_hits, hits);
        let (m, mi, mfp) = per(&after_hits, &after_misses, misses);
        let (sc, sci, _) = per(&after_misses, &after_scans, scans);
        eprintln!(
            "{name}: I/Os per op — get hit: {h:.3} data + {hi:.3} index blocks; get miss: {m:.4} data + {mi:.3} index blocks ({mfp:.4} false positives); scan-100: {sc:.2} data + {sci:.2} index blocks"
        );
        e.close().unwrap();
    }
}

criterion_group!(benches, engine);
criterion_main!(benches);
