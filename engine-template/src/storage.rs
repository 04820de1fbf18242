//! The road to disk for the write-ahead log: a narrow trait with the real file system behind it, and a backend
//! that fails chosen calls so tests can make an fsync or a write fail (what no process kill can show).
//!
//! Run files and the manifest still use `std::fs` directly; they move behind this trait with the template
//! redesign.

use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An append-only log file: each `append` is one `write` to the operating system (nothing waits in a
/// user-space buffer), `sync` makes what was appended durable.
pub trait LogFile: Send + Sync {
    /// Writes all of `bytes` at the end of the file.
    fn append(&self, bytes: &[u8]) -> io::Result<()>;
    /// fsyncs the file's data.
    fn sync(&self) -> io::Result<()>;
}

/// Creates log files and makes directory entries durable.
pub trait Backend: Send + Sync {
    /// Opens `path` for appending, creating it if missing.
    fn open_log(&self, path: &Path) -> io::Result<Arc<dyn LogFile>>;
    /// fsyncs the directory `dir`, so entries created, renamed or removed in it survive a crash.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// The storage an engine writes its log through: the real file system by default.
#[derive(Clone)]
pub struct Storage(Arc<dyn Backend>);

impl Storage {
    /// Storage over `backend`.
    pub fn new(backend: impl Backend + 'static) -> Self {
        Storage(Arc::new(backend))
    }

    /// Opens `path` for appending.
    pub fn open_log(&self, path: &Path) -> io::Result<Arc<dyn LogFile>> {
        self.0.open_log(path)
    }

    /// fsyncs a directory.
    pub fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.0.sync_dir(dir)
    }
}

impl Default for Storage {
    fn default() -> Self {
        Storage::new(FileSystem)
    }
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Storage")
    }
}

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileSystem;

struct OsLog(File);

impl OsLog {
    /// Opens `path` for appending, creating it if missing.
    fn open(path: &Path) -> io::Result<Self> {
        Ok(OsLog(File::options().create(true).append(true).open(path)?))
    }
}

impl LogFile for OsLog {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        (&self.0).write_all(bytes)
    }

    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

impl Backend for FileSystem {
    fn open_log(&self, path: &Path) -> io::Result<Arc<dyn LogFile>> {
        Ok(Arc::new(OsLog::open(path)?))
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

/// Which calls a [`Failing`] backend makes fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// `LogFile::sync`.
    Sync,
    /// `LogFile::append`.
    Append,
}

/// The file system, except that calls of one kind fail: every one from the `n`-th on, or only the `n`-th
/// (counting from 1, over every file the backend opened), as Linux reports a failed write-back to one fsync
/// and lets the next one succeed. For fault-injection tests.
pub struct Failing {
    kind: FaultKind,
    calls: Arc<AtomicU64>,
    from: u64,
    once: bool,
}

impl Failing {
    /// Fails every call of `kind` from the `n`-th on.
    pub fn from_nth(kind: FaultKind, n: u64) -> Self {
        Failing {
            kind,
            calls: Arc::new(AtomicU64::new(0)),
            from: n.max(1),
            once: false,
        }
    }

    /// Fails the `n`-th call of `kind` only; the calls after it succeed.
    pub fn nth_only(kind: FaultKind, n: u64) -> Self {
        Failing {
            once: true,
            ..Self::from_nth(kind, n)
        }
    }
}

struct FailingLog {
    file: OsLog,
    kind: FaultKind,
    calls: Arc<AtomicU64>,
    from: u64,
    once: bool,
}

impl FailingLog {
    fn fault(&self, kind: FaultKind) -> io::Result<()> {
        if kind != self.kind {
            return Ok(());
        }
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == self.from || (!self.once && call > self.from) {
            return Err(io::Error::other(format!("injected {kind:?} failure")));
        }
        Ok(())
    }
}

impl LogFile for FailingLog {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        self.fault(FaultKind::Append)?;
        self.file.append(bytes)
    }

    fn sync(&self) -> io::Result<()> {
        self.fault(FaultKind::Sync)?;
        self.file.sync()
    }
}

impl Backend for Failing {
    fn open_log(&self, path: &Path) -> io::Result<Arc<dyn LogFile>> {
        Ok(Arc::new(FailingLog {
            file: OsLog::open(path)?,
            kind: self.kind,
            calls: self.calls.clone(),
            from: self.from,
            once: self.once,
        }))
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        FileSystem.sync_dir(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_backend_fails_from_the_nth_call() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::new(Failing::from_nth(FaultKind::Sync, 2));
        let log = s.open_log(&dir.path().join("a")).unwrap();
        log.append(b"x").unwrap();
        log.sync().unwrap();
        log.append(b"y").unwrap();
        assert!(log.sync().is_err());
        assert!(log.sync().is_err());
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"xy");
    }
}
