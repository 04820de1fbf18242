//! The tree's shape at one moment: levels of runs of files. Immutable; a compaction produces a new version.

use crate::runfile::RunFile;
use crate::shape::{FileShape, LevelShape, RunShape};
use std::sync::Arc;

/// A sorted run: non-overlapping files in key order.
#[derive(Clone)]
pub struct Run {
    /// Run id (unique, increasing with age).
    pub id: u64,
    /// Files in key order.
    pub files: Vec<Arc<RunFile>>,
}

impl Run {
    /// Total bytes on disk.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.meta.size).sum()
    }

    /// Entries stored.
    pub fn entries(&self) -> u64 {
        self.files.iter().map(|f| f.meta.entries).sum()
    }

    /// The file whose key range may hold `key`.
    pub fn file_for(&self, key: &[u8]) -> Option<&Arc<RunFile>> {
        let i = self
            .files
            .partition_point(|f| f.meta.max_key.as_slice() < key);
        self.files
            .get(i)
            .filter(|f| f.meta.min_key.as_slice() <= key)
    }
}

/// One level: runs, newest first.
#[derive(Clone, Default)]
pub struct Level {
    /// Runs, newest first.
    pub runs: Vec<Arc<Run>>,
}

impl Level {
    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.runs.iter().map(|r| r.bytes()).sum()
    }

    /// Entries.
    pub fn entries(&self) -> u64 {
        self.runs.iter().map(|r| r.entries()).sum()
    }
}

/// Disk levels 1..=L (index 0 is level 1).
#[derive(Clone, Default)]
pub struct Version {
    /// The levels; trailing empty levels are trimmed.
    pub levels: Vec<Level>,
}

impl Version {
    /// Every file, with its (1-based) level.
    pub fn files(&self) -> impl Iterator<Item = (usize, &Arc<RunFile>)> {
        self.levels.iter().enumerate().flat_map(|(i, l)| {
            l.runs
                .iter()
                .flat_map(move |r| r.files.iter().map(move |f| (i + 1, f)))
        })
    }

    /// Total bytes on disk.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes()).sum()
    }

    /// Entries (versions, not distinct keys).
    pub fn entries(&self) -> u64 {
        self.levels.iter().map(|l| l.entries()).sum()
    }

    /// The deepest non-empty level (1-based), 0 when empty.
    pub fn depth(&self) -> usize {
        self.levels
            .iter()
            .rposition(|l| !l.runs.is_empty())
            .map_or(0, |i| i + 1)
    }

    /// Drops empty trailing levels.
    pub fn trim(&mut self) {
        while self.levels.last().is_some_and(|l| l.runs.is_empty()) {
            self.levels.pop();
        }
    }
}

impl FileShape for RunFile {
    fn id(&self) -> u64 {
        self.id
    }
    fn bytes(&self) -> u64 {
        self.meta.size
    }
    fn min_key(&self) -> &[u8] {
        &self.meta.min_key
    }
    fn max_key(&self) -> &[u8] {
        &self.meta.max_key
    }
}

impl RunShape for Run {
    type File = Arc<RunFile>;
    fn id(&self) -> u64 {
        self.id
    }
    fn files(&self) -> &[Arc<RunFile>] {
        &self.files
    }
}

impl LevelShape for Level {
    type Run = Arc<Run>;
    fn runs(&self) -> &[Arc<Run>] {
        &self.runs
    }
}
