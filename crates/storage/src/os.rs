//! The operating system's file system.

use crate::{Fs, ReadFile, WriteFile};
use std::any::Any;
use std::fs::{File, TryLockError};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// The operating system's file system: `write(2)` per append, `fdatasync` per sync, `pread` per read.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFs;

struct OsWrite(File);

impl WriteFile for OsWrite {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        (&self.0).write_all(bytes)
    }

    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
}

struct OsRead(File);

impl ReadFile for OsRead {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn advise_random(&self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid open descriptor; the call only sets the kernel's readahead policy for it
        let rc = unsafe { libc::posix_fadvise(self.0.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(rc))
        }
    }

    fn prefetch(&self, offset: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len))
        else {
            return Ok(());
        };
        // SAFETY: a valid open descriptor; the call only starts the kernel's asynchronous read of the range
        let rc = unsafe {
            libc::posix_fadvise(self.0.as_raw_fd(), offset, len, libc::POSIX_FADV_WILLNEED)
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(rc))
        }
    }
}

impl Fs for OsFs {
    fn create(&self, path: &Path, exclusive: bool) -> io::Result<Arc<dyn WriteFile>> {
        let mut o = File::options();
        o.append(true);
        if exclusive {
            o.create_new(true);
        } else {
            // append mode cannot truncate: empty the file first
            File::create(path)?;
        }
        Ok(Arc::new(OsWrite(o.open(path)?)))
    }

    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WriteFile>> {
        Ok(Arc::new(OsWrite(
            File::options().create(true).append(true).open(path)?,
        )))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadFile>> {
        Ok(Arc::new(OsRead(File::open(path)?)))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for e in std::fs::read_dir(dir)? {
            names.push(e?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        match f.try_lock() {
            Ok(()) => Ok(Box::new(f)),
            Err(TryLockError::WouldBlock) => Err(io::ErrorKind::WouldBlock.into()),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_and_lock_excludes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let w = OsFs.create(&p, true).unwrap();
        w.append(b"hello").unwrap();
        w.append(b" world").unwrap();
        w.sync().unwrap();
        assert!(OsFs.create(&p, true).is_err());
        let r = OsFs.open_read(&p).unwrap();
        // random-access advice is accepted, and reads work as before under it
        r.advise_random().unwrap();
        let mut buf = [0; 5];
        r.read_exact_at(&mut buf, 6).unwrap();
        assert_eq!(&buf, b"world");
        assert_eq!(r.len().unwrap(), 11);
        let again = OsFs.create(&p, false).unwrap();
        assert_eq!(again.len().unwrap(), 0);
        again.append(b"x").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"x");
        let guard = OsFs.lock(&d.path().join("LOCK")).unwrap();
        let second = OsFs.lock(&d.path().join("LOCK"));
        assert_eq!(
            second.err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock)
        );
        drop(guard);
        assert!(OsFs.lock(&d.path().join("LOCK")).is_ok());
        assert_eq!(OsFs.list(d.path()).unwrap().len(), 2);
    }
}
