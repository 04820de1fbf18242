//! Embedding the engine: open with a design, write, read, scan, read-modify-write, snapshot and stream a
//! range, look at the stats.
//!
//! `cargo run --release -p cosine-engine --example embed [DESIGN.json]`

use cosine_engine::{Design, Engine};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = match std::env::args().nth(1) {
        Some(path) => cosine_design::load_design(&path)?,
        None => Design::rocksdb_like(1 << 20, 256 << 10, 1 << 20), // M_B, M_BF, M_FP in bytes
    };
    let dir = std::env::temp_dir().join(format!("cosine-embed-{}", std::process::id()));
    let engine = Engine::open(&dir, &design)?;
    for i in 0..50_000u32 {
        engine.put(
            format!("user{i:06}").as_bytes(),
            format!("{{\"id\":{i}}}").as_bytes(),
        )?;
    }
    assert_eq!(
        engine.get(b"user000042")?.as_deref(),
        Some(&b"{\"id\":42}"[..])
    );
    engine.delete(b"user000042")?;
    assert_eq!(engine.get(b"user000042")?, None);
    for _ in 0..3 {
        engine.read_modify_write(b"counter", |old| Some(vec![old.map_or(1, |v| v[0] + 1)]))?;
    }
    assert_eq!(engine.get(b"counter")?, Some(vec![3]));
    let page = engine.scan(b"user000040".to_vec()..b"user000045".to_vec(), 10)?;
    println!(
        "scan user000040..user000045: {} entries (user000042 was deleted)",
        page.len()
    );
    // a snapshot keeps its view while the store moves on; a range streams with bounded memory
    let snap = engine.snapshot()?;
    engine.put(b"user000001", b"changed")?;
    let mut streamed = 0;
    for entry in snap.range(b"user".to_vec()..)? {
        let (_, v) = entry?;
        assert_ne!(v, b"changed");
        streamed += 1;
    }
    println!("snapshot range: {streamed} users as of the snapshot");
    drop(snap);
    engine.flush()?;
    let s = engine.stats();
    println!(
        "class {:?}: {} levels, write amplification {:.2}",
        design.class,
        s.levels.len(),
        s.write_amplification
    );
    for l in &s.levels {
        println!(
            "  level {}: {} runs, {} files, {} bytes, fences of {} runs in memory ({} block reads, {} filter probes)",
            l.level,
            l.runs,
            l.files,
            l.bytes,
            l.resident_runs,
            l.io.block_reads,
            l.io.filter_probes
        );
    }
    println!(
        "memory: buffer {} B, filters {} B, fences {} B, budget {} B",
        s.memory.buffer_bytes, s.memory.filter_bytes, s.memory.fence_bytes, s.memory.budget_bytes
    );
    engine.close()?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
