//! Errors of the on-disk layer.

use std::path::PathBuf;
use thiserror::Error;

/// What can go wrong reading or writing runs.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A checksum did not match or a structure did not decode: the bytes at `offset` of `file` are corrupt.
    #[error("corruption in {file} at offset {offset}: {reason}")]
    Corruption {
        /// The file.
        file: PathBuf,
        /// Byte offset of the damaged block or section.
        offset: u64,
        /// What failed.
        reason: String,
    },
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;

/// Wraps an `io::Error` with its path.
pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}
