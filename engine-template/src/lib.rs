//! `cosine-engine`: the templated storage engine. One codebase that takes the shape of an LSM-tree, a
//! B-tree-like layout, a log-structured hash table or any hybrid, from a [`Design`] (Cosine Sections 2 and 6).
//!
//! The parts: a write buffer ([`cosine_buffer`]), Bloom filters ([`cosine_filters`]), fence pointers
//! ([`cosine_fence_pointers`]) and levels of runs with their compaction policy ([`cosine_levels`]). This crate
//! adds the write-ahead log, the manifest, recovery, the background flush and compaction thread, and the API.
//!
//! Durability: every write is handed to the operating system in the log before it is acknowledged, so no
//! acknowledged write is lost when the process is killed, in any [`SyncMode`]; with [`SyncMode::Always`] or
//! [`SyncMode::Batch`] (the default, group commit) it is fsynced too before it is acknowledged or visible to
//! readers, so a machine crash loses none either. A failed fsync poisons the engine: every later write and
//! [`Engine::close`] return the error. Every block, index, filter, log record and the manifest carries a CRC32C; damaged bytes
//! give [`Error::Corruption`], never wrong data.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod engine;
mod error;
mod heap;
pub mod manifest;
pub mod parts;
mod stats;
/// The road to disk every file of the engine goes through (re-exported `cosine-storage`).
pub use cosine_storage as storage;
pub mod template;
pub mod wal;

pub use cosine_design::{Design, DesignClass};
pub use cosine_levels::{thread_read_blocks, SCAN_READAHEAD_MAX};
pub use engine::{Engine, Options, Range, Snapshot};
pub use error::{Error, Result};
pub use parts::Parts;
pub use stats::{LevelStats, MemoryStats, Stats};
pub use wal::{SyncMode, WalRecovery};
