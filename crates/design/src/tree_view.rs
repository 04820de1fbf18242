//! The tree's shape as the compaction policy sees it: files (id, size, key range) in runs in levels. Three
//! traits, [`FileShape`], [`RunShape`] and [`LevelShape`], are what [`crate::planner::plan`] reads; the engine's
//! live version (`cosine_levels::Version`) implements them, and so do the owned views below, which the shape
//! simulator ([`crate::simulate`]) carries forward plan by plan.

/// A file as the planner sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileView {
    /// File id (increasing with age).
    pub id: u64,
    /// Bytes.
    pub bytes: u64,
    /// Smallest key.
    pub min_key: Vec<u8>,
    /// Largest key.
    pub max_key: Vec<u8>,
}

/// A run as the planner sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunView {
    /// Run id.
    pub id: u64,
    /// Files in key order.
    pub files: Vec<FileView>,
}

/// A level as the planner sees it: runs newest first.
pub type LevelView = Vec<RunView>;

/// A file, to the compaction policy: its id (increasing with age), size and key range. The engine's run files
/// (`cosine_levels::RunFile`) and the simulator's [`FileView`]s both are.
pub trait FileShape {
    /// File id (increasing with age).
    fn id(&self) -> u64;
    /// Bytes on disk.
    fn bytes(&self) -> u64;
    /// Smallest key.
    fn min_key(&self) -> &[u8];
    /// Largest key.
    fn max_key(&self) -> &[u8];
}

/// A sorted run, to the compaction policy: an id and non-overlapping files in key order.
pub trait RunShape {
    /// The run's files.
    type File: FileShape;
    /// Run id (unique, increasing with age).
    fn id(&self) -> u64;
    /// Files in key order.
    fn files(&self) -> &[Self::File];
    /// Bytes on disk.
    fn bytes(&self) -> u64 {
        self.files().iter().map(FileShape::bytes).sum()
    }
}

/// A level, to the compaction policy: its runs, newest first. [`crate::planner::plan`] is a pure function over a slice of
/// these, so the engine plans over its live version (no copy) and the simulator over
/// [`LevelView`]s.
pub trait LevelShape {
    /// The level's runs.
    type Run: RunShape;
    /// Runs, newest first.
    fn runs(&self) -> &[Self::Run];
}

impl FileShape for FileView {
    fn id(&self) -> u64 {
        self.id
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn min_key(&self) -> &[u8] {
        &self.min_key
    }
    fn max_key(&self) -> &[u8] {
        &self.max_key
    }
}

impl RunShape for RunView {
    type File = FileView;
    fn id(&self) -> u64 {
        self.id
    }
    fn files(&self) -> &[FileView] {
        &self.files
    }
}

impl LevelShape for LevelView {
    type Run = RunView;
    fn runs(&self) -> &[RunView] {
        self
    }
}

impl<F: FileShape> FileShape for std::sync::Arc<F> {
    fn id(&self) -> u64 {
        (**self).id()
    }
    fn bytes(&self) -> u64 {
        (**self).bytes()
    }
    fn min_key(&self) -> &[u8] {
        (**self).min_key()
    }
    fn max_key(&self) -> &[u8] {
        (**self).max_key()
    }
}

impl<R: RunShape> RunShape for std::sync::Arc<R> {
    type File = R::File;
    fn id(&self) -> u64 {
        (**self).id()
    }
    fn files(&self) -> &[R::File] {
        (**self).files()
    }
}
