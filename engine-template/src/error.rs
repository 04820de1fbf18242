//! The engine's typed errors.

use std::path::PathBuf;
use thiserror::Error;

/// Everything an engine operation can fail with.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Stored bytes failed their checksum or did not decode: never returned as data.
    #[error("corruption in {file} at offset {offset}: {reason}")]
    Corruption {
        /// The damaged file.
        file: PathBuf,
        /// Byte offset of the damaged block, record or section.
        offset: u64,
        /// What failed.
        reason: String,
    },
    /// The design is invalid.
    #[error("invalid design: {0}")]
    InvalidDesign(#[from] cosine_design::DesignError),
    /// The directory holds a database this engine cannot open (unknown format).
    #[error("incompatible database in {dir}: {reason}")]
    Incompatible {
        /// The directory.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
    /// Another process (or engine) has the directory open.
    #[error("{0} is locked by another engine")]
    Locked(PathBuf),
    /// A key longer than 64 KiB.
    #[error("key of {0} bytes exceeds the 64 KiB limit")]
    KeyTooLarge(usize),
    /// A value longer than 1 GiB.
    #[error("value of {0} bytes exceeds the 1 GiB limit")]
    ValueTooLarge(usize),
    /// A write batch whose log record would exceed 4 GiB (a batch is one record, so that a crash leaves all of
    /// it or none).
    #[error("write batch of {0} bytes exceeds the 4 GiB limit of one log record")]
    BatchTooLarge(u64),
    /// An earlier write or background error left the engine unable to accept writes safely.
    #[error("engine is poisoned by an earlier failure: {0}")]
    Poisoned(String),
    /// The engine was closed.
    #[error("engine is closed")]
    Closed,
    /// A flush or compaction panicked (a bug, or a part that panics): the engine is poisoned by it.
    #[error("the background {0} thread panicked: {1}")]
    BackgroundPanic(&'static str, String),
    /// The directory holds run files or log records but no MANIFEST: the manifest was lost (a partial copy,
    /// a removed file). Opening it as a new database would delete the run files, so it is refused and
    /// nothing is touched.
    #[error("{dir} has no MANIFEST but {runs} run files and {logs} log segments with records: its manifest was lost (a partial copy or a removed file?); nothing was deleted. Restore the MANIFEST, or move the files away to start an empty database")]
    MissingManifest {
        /// The directory.
        dir: PathBuf,
        /// Run files found.
        runs: usize,
        /// Log segments found that hold bytes.
        logs: usize,
    },
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;

impl From<cosine_levels::Error> for Error {
    fn from(e: cosine_levels::Error) -> Self {
        match e {
            cosine_levels::Error::Io { path, source } => Error::Io { path, source },
            cosine_levels::Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file,
                offset,
                reason,
            },
            other => Error::Poisoned(other.to_string()),
        }
    }
}

pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}
