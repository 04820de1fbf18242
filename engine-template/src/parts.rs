//! The factory of the template: which parts a [`Design`] picks.
//!
//! An engine is a write buffer, an in-memory index per hot run, a filter per run file (or none) and levels of
//! runs under a compaction policy. [`Parts::of`] is the one place where design values become those choices;
//! everything else in the engine asks [`Parts`], never the design's class. It is a `const fn`: the standalone
//! engine `cosine generate` writes evaluates it on its `const DESIGN` at compile time
//! (`const PARTS: Parts = Parts::of(&DESIGN)`), and an embedder may pass other parts in
//! [`crate::Options::parts`] (any combination runs; only [`Parts::of`]'s is what the cost model prices).
//!
//! Each part is an enum dispatched without a virtual call: [`BufferKind`] builds the buffer
//! ([`BufferKind::build`]), [`IndexKind`] tells the run-file writer which index to write and the reader which
//! one a hot file keeps, the filter granularity picks `cosine_filters::FileFilter`'s layout. The compaction
//! policy is `cosine_levels::planner::Policy::of(design, hot_levels)`, a pure function of the design and the
//! tree's shape.
//!
//! Adding a kind of buffer is a variant of [`BufferKind`] and of `cosine_buffer::Buffer` in
//! `crates/buffer/src/lib.rs`, and the line of [`Parts::of`] that picks it. FASTER's hybrid log is the hash-log
//! buffer (its mutable region: updates in place) plus [`Parts::read_only_region`].

pub use cosine_buffer::BufferKind;
use cosine_design::{Design, FilterGranularity};
pub use cosine_fence_pointers::IndexKind;

/// The parts an engine is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts {
    /// The write buffer (the active one and those waiting for their flush).
    pub buffer: BufferKind,
    /// The in-memory index a hot run keeps within M_FP (cold runs read their on-disk index).
    pub index: IndexKind,
    /// The filters' granularity, or `None` for no filters (M_BF unused).
    pub filter: Option<FilterGranularity>,
    /// Writers wait while level 1 lags its design (too many runs, or half again its merge size), so that a
    /// burst cannot outrun compaction and push the tree off the shape the model prices. A log-structured
    /// hash table has one level of runs that merges by count: it never waits.
    pub wait_for_level1: bool,
    /// FASTER's hybrid log ([`Design::has_read_only_region`]): a flushed buffer stays in memory as the log's
    /// read-only region, within the M_B the mutable region leaves, and answers lookups; its oldest records
    /// are dropped as the next frozen buffer needs their memory. Without it (an append-only log, or any
    /// sorted design) a buffer is dropped once flushed.
    pub read_only_region: bool,
}

impl Parts {
    /// The parts `design` picks. A log-structured hash table ([`Design::runs_as_lsh`]): a hash-log buffer, a
    /// hash index per run, no filters, no level-1 stall. Any other design: a sorted skiplist, fence pointers,
    /// filters of the design's granularity when M_BF is above zero.
    pub const fn of(design: &Design) -> Parts {
        if design.runs_as_lsh() {
            Parts {
                buffer: BufferKind::HashLog,
                index: IndexKind::Hash,
                filter: None,
                wait_for_level1: false,
                read_only_region: design.has_read_only_region(),
            }
        } else {
            Parts {
                buffer: BufferKind::Sorted,
                index: IndexKind::Fences,
                filter: if design.filter_bytes > 0 {
                    Some(design.filter_granularity)
                } else {
                    None
                },
                wait_for_level1: true,
                read_only_region: false,
            }
        }
    }

    /// Whether run files carry filters (a hash-indexed file never does: its index already names the block).
    pub const fn filtered(&self) -> bool {
        self.filter.is_some() && !matches!(self.index, IndexKind::Hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_picks_the_parts_of_its_class() {
        let mib = 1 << 20;
        let lsm = Parts::of(&Design::rocksdb_like(mib, mib, mib));
        assert_eq!(lsm.buffer, BufferKind::Sorted);
        assert_eq!(lsm.index, IndexKind::Fences);
        assert_eq!(lsm.filter, Some(FilterGranularity::File));
        assert!(lsm.wait_for_level1 && lsm.filtered());

        let lsh = Parts::of(&Design::lsh_like(mib, mib));
        assert_eq!(lsh.buffer, BufferKind::HashLog);
        assert_eq!(lsh.index, IndexKind::Hash);
        assert!(!lsh.filtered() && !lsh.wait_for_level1);
        // the log kind picks the read-only region; only an LSH design has a log kind that matters
        assert!(lsh.read_only_region);
        let mut append_only = Design::lsh_like(mib, mib);
        append_only.log = cosine_design::LogKind::AppendOnly;
        assert!(!Parts::of(&append_only).read_only_region);
        assert!(!Parts::of(&Design::rocksdb_like(mib, mib, mib)).read_only_region);

        let btree = Parts::of(&Design::wiredtiger_like(mib, mib));
        assert_eq!((btree.buffer, btree.filter), (BufferKind::Sorted, None));

        let mut block = Design::hybrid(4, mib, mib, mib);
        block.filter_granularity = FilterGranularity::Block;
        assert_eq!(Parts::of(&block).filter, Some(FilterGranularity::Block));
    }

    #[test]
    fn parts_are_picked_at_compile_time() {
        const DESIGN: Design = Design {
            size_ratio: 1000,
            hot_runs: 999,
            cold_runs: 999,
            block_bytes: 4096,
            buffer_bytes: 1 << 20,
            filter_bytes: 0,
            fence_bytes: 1 << 20,
            cache_bytes: 0,
            filter_granularity: FilterGranularity::Run,
            compaction: cosine_design::Compaction::Full,
            run_strategy: cosine_design::RunStrategy::First,
            file_picking: cosine_design::FilePicking::Oldest,
            merge_threshold: 1.0,
            full_compaction_levels: 1,
            threads: 1,
            file_bytes: 64 << 20,
            log: cosine_design::LogKind::AppendOnly,
            mutable_fraction: 0.5,
            class: None,
        };
        const PARTS: Parts = Parts::of(&DESIGN);
        // no class recorded: Algorithm 3 decides (no filters, T above the entries per block)
        let mut append_only = Design::lsh_like(1 << 20, 1 << 20);
        append_only.log = cosine_design::LogKind::AppendOnly;
        assert_eq!(PARTS, Parts::of(&append_only));
    }
}
