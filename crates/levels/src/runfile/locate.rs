//! The run file's seams. A file's residency (set from the design's memory budgets) picks two parts:
//!
//! * the **locator**, how a lookup finds the blocks that may hold a key ([`Locator`]): in-memory fences (a hot
//!   file of a tree design: no I/O), a hash index (a hot file of an LSH design: candidate blocks by tag), or the
//!   on-disk index under the always-resident top index (a cold file: one index block read);
//! * the **filter**, what lets a lookup skip the file or a block without reading it: a filter over the file's
//!   keys, over (key, block) pairs, or none (`cosine_filters::FileFilter`, `Option`al).
//!
//! Both are enums, dispatched without a virtual call on the point-lookup path. A new kind of locator is a
//! variant here and the branch of `RunFile::set_residency` that builds it.

use super::*;
use crate::stats::LevelCounters;
use std::ops::ControlFlow;

/// How a file finds a key's block: the part its residency picked.
#[derive(Clone)]
pub(super) enum Locator {
    /// Fences in memory (a hot file of a tree design): the block is found without I/O.
    Fences(Arc<Fences>),
    /// A hash index in memory (a hot file of an LSH design): 32-bit tags name candidate blocks, read until one
    /// holds the key.
    Hash(Arc<HashIndex>),
    /// The on-disk index (a cold file): the top index names an index block, read to find the data block.
    OnDisk,
}

impl Locator {
    /// Whether the locator names several candidate blocks by tag (a miss in one means try the next).
    pub(super) fn is_hash(&self) -> bool {
        matches!(self, Locator::Hash(_))
    }

    /// Bytes of memory the locator holds (the top index is counted by the file).
    pub(super) fn memory_bytes(&self) -> usize {
        match self {
            Locator::Fences(f) => f.memory_bytes(),
            Locator::Hash(h) => h.memory_bytes(),
            Locator::OnDisk => 0,
        }
    }

    /// Hands `visit` each block that may hold `key`, in the order to read them, until it breaks; index blocks
    /// read on the way are counted in `counters`. Returns what `visit` broke with, or `None`.
    pub(super) fn visit<T>(
        &self,
        file: &RunFile,
        key: &[u8],
        counters: &LevelCounters,
        mut visit: impl FnMut(BlockHandle) -> Result<ControlFlow<T>>,
    ) -> Result<Option<T>> {
        let located = match self {
            Locator::Hash(h) => {
                for handle in h.blocks(key) {
                    if let ControlFlow::Break(t) = visit(handle)? {
                        return Ok(Some(t));
                    }
                }
                return Ok(None);
            }
            Locator::Fences(f) => f.locate(key),
            Locator::OnDisk => match file.top.locate(key) {
                Locate::IndexBlock(ib) => {
                    IoStats::bump_read(&counters.index_reads);
                    file.read_index_block(ib)?.locate(key)
                }
                other => other,
            },
        };
        match located {
            Locate::Block(h) => Ok(match visit(h)? {
                ControlFlow::Break(t) => Some(t),
                ControlFlow::Continue(()) => None,
            }),
            _ => Ok(None),
        }
    }
}
