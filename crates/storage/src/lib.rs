//! The road to disk. Every file the engine touches (log segments, run files, the manifest, the lock) goes
//! through one narrow trait, [`Fs`], so that tests can put something other than the operating system behind
//! it:
//!
//! * [`OsFs`]: the real file system (the default).
//! * [`MemFs`]: an in-memory file system that remembers what was made durable. It can be crashed at any call
//!   ([`MemFs::crash_after`]) and its crash image opened again ([`MemFs::recover`]): only bytes a file `sync`
//!   covered and directory entries a `sync_dir` covered survive, as after a power loss. A process kill cannot
//!   show this, because the page cache survives it.
//! * [`Failing`]: another backend whose calls of one kind fail from (or only at) the n-th, as a disk that
//!   reports a write-back error does.
//!
//! The trait is small on purpose (create, open for append, open for reading, rename, remove, list, make a
//! directory, sync a directory, lock), after LevelDB's `Env` and redb's `StorageBackend`: what a storage
//! engine needs and no more.
#![deny(missing_docs)]
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod failing;
mod mem;
mod os;

pub use failing::{Failing, FaultKind};
pub use mem::MemFs;
pub use os::OsFs;

use std::any::Any;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file open for writing at its end. Each `append` is one write to the backend: nothing waits in a buffer of
/// the handle's own, so a process kill after `append` returns loses nothing.
pub trait WriteFile: Send + Sync {
    /// Writes all of `bytes` at the end of the file.
    fn append(&self, bytes: &[u8]) -> io::Result<()>;
    /// Makes everything appended so far durable (fsync of the file's data).
    fn sync(&self) -> io::Result<()>;
    /// Cuts (or extends with zeros) the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Tells the OS that this handle's reads are random, so that it reads nothing ahead of them (RocksDB's
    /// `advise_random_on_open`). A point read otherwise pulls the kernel's readahead window in with it, and
    /// under a memory cap those pages push useful ones out.
    fn advise_random(&self) -> io::Result<()> {
        Ok(())
    }
}

/// A file open for reading at any offset.
pub trait ReadFile: Send + Sync {
    /// Fills `buf` from `offset`; an error if the file ends before `buf` is full.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Tells the OS that this handle's reads are random, so that it reads nothing ahead of them (RocksDB's
    /// `advise_random_on_open`). A point read otherwise pulls the kernel's readahead window in with it, and
    /// under a memory cap those pages push useful ones out.
    fn advise_random(&self) -> io::Result<()> {
        Ok(())
    }
    /// Asks the OS to start reading `len` bytes from `offset` into its cache without waiting for them
    /// (`POSIX_FADV_WILLNEED`): a scan's own readahead, of exactly the bytes it expects to read next. Only
    /// advice: a backend without a cache does nothing.
    fn prefetch(&self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
}

/// A file system as the engine uses one.
pub trait Fs: Send + Sync {
    /// Creates `path` for writing. With `exclusive` the file must not exist; otherwise an existing file is
    /// truncated.
    fn create(&self, path: &Path, exclusive: bool) -> io::Result<Arc<dyn WriteFile>>;
    /// Opens `path` for appending, creating it if missing.
    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WriteFile>>;
    /// Opens an existing `path` for reading (`ErrorKind::NotFound` when it is missing).
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadFile>>;
    /// Renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// The names of the files in `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Creates `dir` and its missing ancestors.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// fsyncs the directory `dir`, so that entries created, renamed or removed in it survive a crash.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Takes an exclusive lock on `path` (created if missing) for as long as the returned guard lives;
    /// `ErrorKind::WouldBlock` when another holder has it.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>>;
}

/// A shared backend is a backend: a test keeps one handle (to count calls or crash it) and gives the engine
/// another.
impl<F: Fs + ?Sized> Fs for Arc<F> {
    fn create(&self, path: &Path, exclusive: bool) -> io::Result<Arc<dyn WriteFile>> {
        (**self).create(path, exclusive)
    }
    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WriteFile>> {
        (**self).open_append(path)
    }
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadFile>> {
        (**self).open_read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        (**self).rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        (**self).remove(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        (**self).list(dir)
    }
    fn is_dir(&self, path: &Path) -> bool {
        (**self).is_dir(path)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        (**self).create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        (**self).sync_dir(dir)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        (**self).lock(path)
    }
}

/// The storage an engine writes through: a cheap handle on a shared [`Fs`]; the operating system's file
/// system by default.
#[derive(Clone)]
pub struct Storage(Arc<dyn Fs>);

impl Storage {
    /// Storage over `fs`.
    pub fn new(fs: impl Fs + 'static) -> Self {
        Storage(Arc::new(fs))
    }

    /// The backend.
    pub fn fs(&self) -> &dyn Fs {
        self.0.as_ref()
    }

    /// Reads the whole of `path`.
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let f = self.0.open_read(path)?;
        let len = usize::try_from(f.len()?).map_err(io::Error::other)?;
        let mut buf = vec![0; len];
        f.read_exact_at(&mut buf, 0)?;
        Ok(buf)
    }

    /// Writes `bytes` to `path` atomically and durably: a temporary file beside it is written and synced,
    /// renamed over `path`, and the directory synced. After a crash `path` holds the old bytes or the new.
    pub fn replace(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let dir = parent_of(path);
        let mut tmp: PathBuf = path.to_path_buf();
        tmp.as_mut_os_string().push(".tmp");
        let f = self.0.create(&tmp, false)?;
        f.append(bytes)?;
        f.sync()?;
        drop(f);
        self.0.rename(&tmp, path)?;
        self.0.sync_dir(dir)
    }
}

impl std::ops::Deref for Storage {
    type Target = dyn Fs;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

impl Default for Storage {
    fn default() -> Self {
        Storage::new(OsFs)
    }
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Storage")
    }
}

/// The parent of `path` for syncing: `/` for a root, `.` for a one-part relative path.
pub fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => Path::new("/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_is_atomic_over_a_crash() {
        let fs = MemFs::new();
        let s = Storage::new(fs.clone());
        s.create_dir_all(Path::new("/d")).unwrap();
        s.sync_dir(Path::new("/")).unwrap();
        s.replace(Path::new("/d/m"), b"one").unwrap();
        fs.crash_after(2); // the temporary's create and append pass, its sync crashes
        assert!(s.replace(Path::new("/d/m"), b"two").is_err());
        let after = Storage::new(fs.recover());
        assert_eq!(after.read(Path::new("/d/m")).unwrap(), b"one");
    }

    #[test]
    fn parent_of_handles_roots_and_relative_names() {
        assert_eq!(parent_of(Path::new("/a/b")), Path::new("/a"));
        assert_eq!(parent_of(Path::new("b")), Path::new("."));
        assert_eq!(parent_of(Path::new("/")), Path::new("/"));
    }
}
