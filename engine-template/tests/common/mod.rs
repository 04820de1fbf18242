//! Shared test fixtures: every engine shape the issue names, at test scale (small buffers and blocks so that
//! a few hundred writes exercise flushes, compactions and cold levels).
#![allow(dead_code)]

use cosine_design::{Design, FilePicking, FilterGranularity};
use cosine_engine::{Engine, Options, SyncMode};
use std::path::Path;

/// Opens `design` in `dir` without syncing the log (tests that do not crash the process need no fsync).
pub fn open_unsynced(dir: &Path, design: &Design) -> cosine_engine::Result<Engine> {
    Engine::open_with(dir, design, Options::with_sync(SyncMode::Never))
}

/// (name, design) for every shape.
pub fn shapes() -> Vec<(&'static str, Design)> {
    let mut rocks = Design::rocksdb_like(1 << 10, 2 << 10, 1 << 20);
    // merges cut into key ranges on threads of their own, whatever the machine's cores
    rocks.threads = 3;
    rocks.block_bytes = 512;
    rocks.file_bytes = 8 << 10;

    let mut tiered = Design::tiered(4, 1 << 10, 2 << 10, 1 << 20);
    // merges cut into key ranges on threads of their own, whatever the machine's cores
    tiered.threads = 2;
    tiered.block_bytes = 512;
    tiered.file_bytes = 8 << 10;

    let mut btree = Design::wiredtiger_like(2 << 10, 256);
    // merges cut into key ranges on threads of their own, whatever the machine's cores
    btree.threads = 4;
    btree.block_bytes = 1024;
    btree.file_bytes = 4 << 10;

    let mut lsh = Design::lsh_like(8 << 10, 1 << 20);
    lsh.block_bytes = 512;

    let mut hybrid = Design::hybrid(4, 1 << 10, 2 << 10, 3000);
    hybrid.full_compaction_levels = 1;
    hybrid.file_picking = FilePicking::DenseFp;
    hybrid.filter_granularity = FilterGranularity::Block;
    // merges cut into key ranges on threads of their own, whatever the machine's cores
    hybrid.threads = 2;
    hybrid.block_bytes = 512;
    hybrid.file_bytes = 4 << 10;

    vec![
        ("rocksdb-like", rocks),
        ("tiered", tiered),
        ("btree-like", btree),
        ("lsh-like", lsh),
        ("hybrid", hybrid),
    ]
}
