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
    // an entry cache of a few dozen small entries: lookups fill it, writes drop from it, it evicts
    rocks.cache_bytes = 4 << 10;

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

    // FASTER's hybrid log (the default log kind): flushed buffers stay in memory as its read-only region
    // (random designs in `design_strategy` draw smaller mutable fractions)
    let mut lsh = Design::lsh_like(8 << 10, 1 << 20);
    lsh.block_bytes = 512;
    lsh.cache_bytes = 4 << 10;

    let mut hybrid = Design::hybrid(4, 1 << 10, 2 << 10, 3000);
    hybrid.full_compaction_levels = 1;
    hybrid.file_picking = FilePicking::DenseFp;
    hybrid.filter_granularity = FilterGranularity::Block;
    // merges cut into key ranges on threads of their own, whatever the machine's cores
    hybrid.threads = 2;
    hybrid.block_bytes = 512;
    hybrid.file_bytes = 4 << 10;

    // the LSH shape above keeps FASTER's hybrid log (its read-only region); this one appends only
    let mut append_only = lsh.clone();
    append_only.log = cosine_design::LogKind::AppendOnly;

    vec![
        ("rocksdb-like", rocks),
        ("tiered", tiered),
        ("btree-like", btree),
        ("lsh-like", lsh),
        ("hybrid", hybrid),
        ("lsh-append-only", append_only),
    ]
}

/// Random valid designs at test scale, over every primitive the engine honours: size ratio, runs per hot and
/// cold level, the memory split (with and without filters, few or many fences), compaction, run strategy, file
/// picking, filter granularity, merge threshold, threads, block and file sizes; one in six is an LSH design.
pub fn design_strategy() -> impl proptest::strategy::Strategy<Value = Design> {
    use cosine_design::{Compaction, DesignClass, RunStrategy};
    use proptest::prelude::*;
    let lsm = (
        (2u64..12, 1u64..12, 1u64..12),
        (1u64..8, 0u64..8, 0u64..4),
        (0usize..3, 0usize..3, 0usize..4, 0usize..3, 0usize..3),
        (1u32..3, 1u32..4, 0usize..3, 0usize..3),
    )
        .prop_map(
            |((t, k, z), (buf, filt, fence), (c, r, p, g, m), (full, threads, b, f))| {
                let mut d = Design::rocksdb_like(buf << 10, filt << 10, (fence << 10) + 256);
                (d.size_ratio, d.hot_runs, d.cold_runs) =
                    (t, k.min(t - 1).max(1), z.min(t - 1).max(1));
                d.compaction = [Compaction::Full, Compaction::Partial, Compaction::Hybrid][c];
                d.run_strategy = [
                    RunStrategy::First,
                    RunStrategy::LastFull,
                    RunStrategy::Fullest,
                ][r];
                d.file_picking = [
                    FilePicking::Oldest,
                    FilePicking::DenseFp,
                    FilePicking::SparseFp,
                    FilePicking::ChooseFirst,
                ][p];
                d.filter_granularity = [
                    FilterGranularity::File,
                    FilterGranularity::Block,
                    FilterGranularity::Run,
                ][g];
                d.merge_threshold = [0.5, 0.75, 1.0][m];
                d.full_compaction_levels = full;
                d.threads = threads;
                d.block_bytes = [256, 512, 1024][b];
                d.file_bytes = [2 << 10, 4 << 10, 8 << 10][f];
                d.class = None;
                d
            },
        );
    // FASTER's hybrid log (its read-only region at several mutable fractions) or an append-only log
    let lsh = (1u64..8, 1u64..16, 0usize..3, 0usize..4).prop_map(|(buf, fence, b, log)| {
        let mut d = Design::lsh_like(buf << 10, fence << 10);
        d.block_bytes = [256, 512, 1024][b];
        d.class = Some(DesignClass::Lsh);
        if log == 0 {
            d.log = cosine_design::LogKind::AppendOnly;
        } else {
            d.mutable_fraction = [0.5, 0.25, 0.1][log - 1];
        }
        d
    });
    // an entry cache of none, a few entries (evicting all the time) or most of the keys
    (prop_oneof![5 => lsm, 1 => lsh], 0usize..3)
        .prop_map(|(mut d, c)| {
            d.cache_bytes = [0, 2 << 10, 32 << 10][c];
            d
        })
        .prop_filter("valid designs only", |d| d.validate().is_ok())
}

/// Any combination of parts, whatever the design would pick: the template must run every one correctly.
pub fn parts_strategy() -> impl proptest::strategy::Strategy<Value = cosine_engine::Parts> {
    use cosine_engine::parts::{BufferKind, IndexKind, Parts};
    use proptest::prelude::*;
    (
        0usize..2,
        0usize..2,
        0usize..4,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(b, i, f, wait, ro)| Parts {
            buffer: [BufferKind::Sorted, BufferKind::HashLog][b],
            index: [IndexKind::Fences, IndexKind::Hash][i],
            filter: [
                None,
                Some(FilterGranularity::File),
                Some(FilterGranularity::Block),
                Some(FilterGranularity::Run),
            ][f],
            wait_for_level1: wait,
            read_only_region: ro,
        })
}
