//! One adapter per peer engine behind `cosine_ycsb::Store`, each given the same memory budget, one module per
//! engine: `rocksdb` (also as `rocksdb-cosine`, with the leveled design Cosine chose), `fjall`, `redb`,
//! `sled` (the `peers` feature), `wiredtiger` (its B-tree and LSM tables through our own FFI; the
//! `wiredtiger` feature) and `faster` (through our C interface; the `faster` feature). Our own engine needs
//! no adapter here: `cosine_ycsb::CosineStore` is its `Store`.
//!
//! What they share: the OS's counters and the settling waits (`os`, re-exported here: engines that do not
//! count their own I/O report /proc/self/io, bytes the process read from and wrote to storage in 4 KiB units,
//! reads served by the OS page cache not counted) and the striped locks of their read-modify-writes (`common`).
//! Each module is compiled with its feature, named once at its `mod` line; [`open`] maps an engine's name to
//! the modules this build has.

use anyhow::Result;
use cosine_ycsb::Store;

mod os;
pub use os::{proc_io, proc_io_bytes, quiet_wait, wait_until_idle, DeviceStats};

#[cfg(feature = "peers")]
mod common;
#[cfg(feature = "faster")]
pub mod faster;
#[cfg(feature = "peers")]
mod fjall;
#[cfg(feature = "peers")]
mod redb;
#[cfg(feature = "peers")]
pub(crate) mod rocksdb;
#[cfg(feature = "peers")]
mod sled;
#[cfg(feature = "wiredtiger")]
pub mod wiredtiger;

/// Peer engines compiled into this build.
pub const AVAILABLE: &[&str] = if cfg!(all(feature = "wiredtiger", feature = "faster")) {
    &[
        "rocksdb",
        "fjall",
        "redb",
        "sled",
        "wiredtiger",
        "wiredtiger-32k",
        "wiredtiger-lsm",
        "faster",
    ]
} else if cfg!(feature = "wiredtiger") {
    &[
        "rocksdb",
        "fjall",
        "redb",
        "sled",
        "wiredtiger",
        "wiredtiger-32k",
        "wiredtiger-lsm",
    ]
} else if cfg!(feature = "faster") {
    &["rocksdb", "fjall", "redb", "sled", "faster"]
} else if cfg!(feature = "peers") {
    &["rocksdb", "fjall", "redb", "sled"]
} else {
    &[]
};

/// Whether an engine can run a workload: FASTER has no ordered scan, so no YCSB-E. The reason when not.
pub fn unsupported(engine: &str, scans: bool) -> Option<&'static str> {
    (engine == "faster" && scans).then_some("not supported: FASTER has no ordered scan")
}

/// Opens a peer engine with `memory` bytes for its caches and buffers; `durable`: every write fsynced before
/// it is acknowledged, else every write handed to the OS without fsync (where the engine can; see each
/// adapter).
#[cfg(feature = "peers")]
pub fn open(
    engine: &str,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<Box<dyn Store>> {
    #[cfg(feature = "wiredtiger")]
    if let Some(table) = wiredtiger::Table::named(engine) {
        return Ok(Box::new(wiredtiger::WiredTiger::open(
            memory, dir, table, durable,
        )?));
    }
    Ok(match engine {
        "rocksdb" => Box::new(rocksdb::Rocks::open(memory, dir, durable)?),
        "fjall" => Box::new(fjall::Fjall::open(memory, dir, durable)?),
        "redb" => Box::new(redb::Redb::open(memory, dir, durable)?),
        "sled" => Box::new(sled::Sled::open(memory, dir, durable)?),
        #[cfg(feature = "faster")]
        "faster" => Box::new(faster::Faster::open(memory, dir, durable)?),
        other => anyhow::bail!("unknown engine '{other}'"),
    })
}

/// Without the `peers` feature there is no peer engine.
#[cfg(not(feature = "peers"))]
pub fn open(
    engine: &str,
    _memory: u64,
    _dir: &std::path::Path,
    _durable: bool,
) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine '{engine}' needs the `peers` feature")
}

/// RocksDB configured with a leveled LSM design Cosine chose (the "RocksDB with Cosine's parameters" row).
#[cfg(feature = "peers")]
pub fn open_rocksdb_tuned(
    design: &cosine_design::Design,
    entries: u64,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<Box<dyn Store>> {
    Ok(Box::new(rocksdb::Rocks::open_tuned(
        design, entries, memory, dir, durable,
    )?))
}

/// Without the `peers` feature there is no RocksDB.
#[cfg(not(feature = "peers"))]
pub fn open_rocksdb_tuned(
    _design: &cosine_design::Design,
    _entries: u64,
    _memory: u64,
    _dir: &std::path::Path,
    _durable: bool,
) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine 'rocksdb-cosine' needs the `peers` feature")
}

#[cfg(all(test, feature = "peers"))]
mod tests {
    use super::*;

    /// Every peer stores, reads back, scans in key order and read-modify-writes.
    #[test]
    fn every_peer_round_trips() {
        // FASTER has no scan and a 224 MiB minimum: its own test is in `faster`
        for engine in AVAILABLE
            .iter()
            .copied()
            .filter(|e| *e != "faster")
            .chain(["rocksdb-cosine"])
        {
            let dir = std::env::temp_dir()
                .join(format!("cosine-peer-test-{}-{engine}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let s = if engine == "rocksdb-cosine" {
                let mut d = cosine_design::Design::rocksdb_like(1 << 20, 1 << 10, 1 << 16);
                d.size_ratio = 4;
                open_rocksdb_tuned(&d, 200, 8 << 20, &dir, false).unwrap()
            } else {
                open(engine, 8 << 20, &dir, false).unwrap()
            };
            for i in 0..200u32 {
                s.insert(
                    format!("k{i:04}").as_bytes(),
                    format!("value-{i}").as_bytes(),
                )
                .unwrap();
            }
            assert_eq!(
                s.read(b"k0042").unwrap().as_deref(),
                Some(&b"value-42"[..]),
                "{engine}"
            );
            assert_eq!(s.read(b"nope").unwrap(), None, "{engine}");
            let tail = s.scan(b"k0190", 50).unwrap();
            assert_eq!(tail.len(), 10, "{engine}");
            assert_eq!(
                tail[0],
                (b"k0190".to_vec(), b"value-190".to_vec()),
                "{engine}"
            );
            assert!(tail.windows(2).all(|w| w[0].0 < w[1].0), "{engine}");
            s.read_modify_write(b"k0001", &mut |old| {
                let mut v = old.unwrap_or_default().to_vec();
                v[..3].copy_from_slice(b"VAL");
                v
            })
            .unwrap();
            assert_eq!(
                s.read(b"k0001").unwrap().as_deref(),
                Some(&b"VALue-1"[..]),
                "{engine}"
            );
            // settling (WiredTiger: a checkpoint through the FFI's method table) leaves every record readable
            s.settle().unwrap();
            assert_eq!(
                s.read(b"k0001").unwrap().as_deref(),
                Some(&b"VALue-1"[..]),
                "{engine} after settle"
            );
            assert_eq!(
                s.scan(b"k0000", 500).unwrap().len(),
                200,
                "{engine} after settle"
            );
            drop(s);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
