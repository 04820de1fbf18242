//! A backend whose calls of one kind fail, for fault-injection tests.

use crate::{Fs, OsFs, ReadFile, WriteFile};
use std::any::Any;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Which calls a [`Failing`] backend makes fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// `WriteFile::sync` on any file.
    Sync,
    /// `WriteFile::append` on any file.
    Append,
    /// `Fs::create`.
    Create,
    /// `Fs::rename`.
    Rename,
    /// `Fs::sync_dir`.
    SyncDir,
    /// `ReadFile::read_exact_at`.
    Read,
    /// `Fs::open_append` and `Fs::open_read` (an existing file).
    Open,
    /// `Fs::remove`.
    Remove,
    /// `Fs::list`.
    List,
    /// `WriteFile::set_len`.
    SetLen,
    /// `Fs::lock`.
    Lock,
}

struct Counter {
    kind: FaultKind,
    calls: AtomicU64,
    from: u64,
    once: bool,
    /// Panic instead of failing (a part that panics, in the thread that calls it).
    panics: AtomicBool,
    /// A failing append writes the first half of its bytes before it fails (a short write).
    short: AtomicBool,
    /// Fail with "no space left on device" (`ErrorKind::StorageFull`).
    no_space: AtomicBool,
}

impl Counter {
    fn fault(&self, kind: FaultKind) -> io::Result<()> {
        if kind != self.kind {
            return Ok(());
        }
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == self.from || (!self.once && call > self.from) {
            if self.panics.load(Ordering::SeqCst) {
                panic!("injected {kind:?} panic");
            }
            if self.no_space.load(Ordering::SeqCst) {
                return Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    format!("injected {kind:?} failure: no space left on device"),
                ));
            }
            return Err(io::Error::other(format!("injected {kind:?} failure")));
        }
        Ok(())
    }
}

/// Another backend (the OS by default), except that calls of one kind fail: every one from the `n`-th on, or
/// only the `n`-th (counting from 1 over every file), as Linux reports a failed write-back to one fsync and
/// lets the next one succeed.
pub struct Failing<F: Fs = OsFs> {
    inner: F,
    counter: Arc<Counter>,
    /// Only paths whose names end so are failed (all when `None`).
    suffix: Option<String>,
}

impl Failing<OsFs> {
    /// The OS file system, failing every call of `kind` from the `n`-th on.
    pub fn from_nth(kind: FaultKind, n: u64) -> Self {
        Failing::over(OsFs, kind, n, false)
    }

    /// The OS file system, failing the `n`-th call of `kind` only.
    pub fn nth_only(kind: FaultKind, n: u64) -> Self {
        Failing::over(OsFs, kind, n, true)
    }
}

impl<F: Fs> Failing<F> {
    /// `inner`, failing the `n`-th call of `kind` (`once`) or every one from the `n`-th on.
    pub fn over(inner: F, kind: FaultKind, n: u64, once: bool) -> Self {
        Failing {
            inner,
            counter: Arc::new(Counter {
                kind,
                calls: AtomicU64::new(0),
                from: n.max(1),
                once,
                panics: AtomicBool::new(false),
                short: AtomicBool::new(false),
                no_space: AtomicBool::new(false),
            }),
            suffix: None,
        }
    }

    /// Fails (and counts) only calls on paths whose file names end with `suffix` (for a directory sync, the
    /// directory's name): `".run"` aims at flushes and compactions, `".wal"` at the log, `"MANIFEST.tmp"` at
    /// manifest installs.
    pub fn on_files(mut self, suffix: &str) -> Self {
        self.suffix = Some(suffix.to_string());
        self
    }

    /// Panics where it would fail: a storage part that panics (a bug), in whichever thread calls it.
    pub fn panicking(self) -> Self {
        self.counter.panics.store(true, Ordering::SeqCst);
        self
    }

    /// A failing append first writes half of its bytes (rounded down), as a short `write` does before the
    /// error that ends it.
    pub fn short_writes(self) -> Self {
        self.counter.short.store(true, Ordering::SeqCst);
        self
    }

    /// Fails with `ErrorKind::StorageFull`, as a full disk does.
    pub fn no_space(self) -> Self {
        self.counter.no_space.store(true, Ordering::SeqCst);
        self
    }

    fn aims_at(&self, path: &Path) -> bool {
        match &self.suffix {
            None => true,
            Some(s) => path.to_string_lossy().ends_with(s.as_str()),
        }
    }

    fn fault(&self, kind: FaultKind, path: &Path) -> io::Result<()> {
        if self.aims_at(path) {
            self.counter.fault(kind)
        } else {
            Ok(())
        }
    }

    /// Calls of the chosen kind made so far (failed ones included).
    pub fn calls(&self) -> u64 {
        self.counter.calls.load(Ordering::SeqCst)
    }
}

struct FailingWrite {
    file: Arc<dyn WriteFile>,
    /// `None` when the file is not aimed at.
    counter: Option<Arc<Counter>>,
}

impl WriteFile for FailingWrite {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        if let Some(c) = &self.counter {
            if let Err(e) = c.fault(FaultKind::Append) {
                if c.short.load(Ordering::SeqCst) {
                    self.file.append(&bytes[..bytes.len() / 2])?;
                }
                return Err(e);
            }
        }
        self.file.append(bytes)
    }

    fn sync(&self) -> io::Result<()> {
        if let Some(c) = &self.counter {
            c.fault(FaultKind::Sync)?;
        }
        self.file.sync()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        if let Some(c) = &self.counter {
            c.fault(FaultKind::SetLen)?;
        }
        self.file.set_len(len)
    }

    fn len(&self) -> io::Result<u64> {
        self.file.len()
    }
}

struct FailingRead {
    file: Arc<dyn ReadFile>,
    counter: Option<Arc<Counter>>,
}

impl ReadFile for FailingRead {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if let Some(c) = &self.counter {
            c.fault(FaultKind::Read)?;
        }
        self.file.read_exact_at(buf, offset)
    }

    fn len(&self) -> io::Result<u64> {
        self.file.len()
    }

    fn advise_random(&self) -> io::Result<()> {
        self.file.advise_random()
    }

    fn prefetch(&self, offset: u64, len: u64) -> io::Result<()> {
        self.file.prefetch(offset, len)
    }
}

impl<F: Fs> Failing<F> {
    fn wrap(&self, path: &Path, file: Arc<dyn WriteFile>) -> Arc<dyn WriteFile> {
        Arc::new(FailingWrite {
            file,
            counter: self.aims_at(path).then(|| self.counter.clone()),
        })
    }
}

impl<F: Fs> Fs for Failing<F> {
    fn create(&self, path: &Path, exclusive: bool) -> io::Result<Arc<dyn WriteFile>> {
        self.fault(FaultKind::Create, path)?;
        Ok(self.wrap(path, self.inner.create(path, exclusive)?))
    }

    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WriteFile>> {
        self.fault(FaultKind::Open, path)?;
        Ok(self.wrap(path, self.inner.open_append(path)?))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadFile>> {
        self.fault(FaultKind::Open, path)?;
        Ok(Arc::new(FailingRead {
            file: self.inner.open_read(path)?,
            counter: self.aims_at(path).then(|| self.counter.clone()),
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.fault(FaultKind::Rename, from)?;
        self.inner.rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.fault(FaultKind::Remove, path)?;
        self.inner.remove(path)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.fault(FaultKind::List, dir)?;
        self.inner.list(dir)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.create_dir_all(dir)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.fault(FaultKind::SyncDir, dir)?;
        self.inner.sync_dir(dir)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        self.fault(FaultKind::Lock, path)?;
        self.inner.lock(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_from_the_nth_call_of_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let s = Failing::from_nth(FaultKind::Sync, 2);
        let log = s.open_append(&dir.path().join("a")).unwrap();
        log.append(b"x").unwrap();
        log.sync().unwrap();
        log.append(b"y").unwrap();
        assert!(log.sync().is_err());
        assert!(log.sync().is_err());
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"xy");
        assert_eq!(s.calls(), 3);
    }

    #[test]
    fn on_files_aims_at_one_kind_of_file() {
        let fs = Failing::over(crate::MemFs::new(), FaultKind::Sync, 1, false).on_files(".run");
        let log = fs.create(Path::new("/1.wal"), true).unwrap();
        log.sync().unwrap();
        let run = fs.create(Path::new("/2.run"), true).unwrap();
        assert!(run.sync().is_err());
        log.sync().unwrap();
        assert_eq!(fs.calls(), 1);
    }

    #[test]
    fn every_kind_fails_its_own_call() {
        let fs = crate::MemFs::new();
        let file = fs.create(Path::new("/f"), true).unwrap();
        file.append(b"abc").unwrap();
        file.sync().unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        let failing = |kind| Failing::over(fs.clone(), kind, 1, false);
        let p = Path::new("/f");
        assert!(failing(FaultKind::Open).open_read(p).is_err());
        assert!(failing(FaultKind::Open).open_append(p).is_err());
        assert!(failing(FaultKind::Remove).remove(p).is_err());
        assert!(failing(FaultKind::List).list(Path::new("/")).is_err());
        assert!(failing(FaultKind::Lock).lock(Path::new("/LOCK")).is_err());
        let f = failing(FaultKind::SetLen);
        assert!(f.open_append(p).unwrap().set_len(1).is_err());
        // a kind fails nothing else
        let f = failing(FaultKind::Remove);
        assert!(f.open_read(p).is_ok() && f.list(Path::new("/")).is_ok());
        assert_eq!(f.calls(), 0);
    }

    #[test]
    fn a_short_write_leaves_half_and_a_full_disk_says_so() {
        let inner = crate::MemFs::new();
        let fs = Failing::over(inner.clone(), FaultKind::Append, 2, true)
            .short_writes()
            .no_space();
        let f = fs.create(Path::new("/f"), true).unwrap();
        f.append(b"whole").unwrap();
        let e = f.append(b"12345678").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        let got = crate::Storage::new(inner).read(Path::new("/f")).unwrap();
        assert_eq!(got, b"whole1234");
    }

    #[test]
    fn nth_only_fails_once() {
        let fs = Failing::over(crate::MemFs::new(), FaultKind::Create, 2, true);
        assert!(fs.create(Path::new("/a"), true).is_ok());
        assert!(fs.create(Path::new("/b"), true).is_err());
        assert!(fs.create(Path::new("/c"), true).is_ok());
    }
}
