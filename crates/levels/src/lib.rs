//! The on-disk part of the engine template (Cosine Section 6): immutable sorted runs of B-byte checksummed
//! blocks ([`runfile`]), levels growing by T ([`version`]), the compaction policy as a pure planner
//! ([`planner`]) and the mechanism that carries plans out ([`compaction`], [`merge`]). This crate owns no
//! threads; the engine decides when to flush and compact.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod compaction;
pub mod error;
pub mod merge;
pub mod runfile;
pub mod stats;
pub mod version;

/// Subcompactions, at the path they had before they moved under [`compaction`].
pub use compaction::subcompaction;
/// The compaction policy as a pure function (it lives in `cosine-design`, where the cost model uses it too).
pub use cosine_design::planner;
/// Plans applied to a shape without data.
pub use cosine_design::simulate;
/// The tree's shape as the planner sees it.
pub use cosine_design::tree_view as shape;
pub use cosine_fence_pointers::IndexKind;
pub use error::{Error, Result};
pub use runfile::{Entry, FileMeta, RunFile, RunFileWriter, WriterOptions, SCAN_READAHEAD_MAX};
pub use stats::{thread_read_blocks, IoStats, LevelSnapshot};
pub use version::{Level, Run, Version};
