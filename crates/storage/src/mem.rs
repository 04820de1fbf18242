//! An in-memory file system that knows what a crash would keep.

use crate::{parent_of, Fs, ReadFile, WriteFile};
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod crash;

/// A file's bytes and how many of them (from the start) a `sync` made durable.
#[derive(Clone, Default)]
struct Inode {
    data: Vec<u8>,
    synced: usize,
}

#[derive(Default)]
struct State {
    /// Every file ever created (removed ones too: a crash may bring a removed name back).
    inodes: Vec<Inode>,
    /// The namespace as the running process sees it.
    files: BTreeMap<PathBuf, usize>,
    /// The namespace as a crash would leave it: each directory's entries as of its last `sync_dir`.
    durable: BTreeMap<PathBuf, usize>,
    dirs: BTreeSet<PathBuf>,
    durable_dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    /// Mutating calls left before the crash (`None`: never).
    countdown: Option<u64>,
    crashed: bool,
    /// Mutating calls made.
    calls: u64,
    /// Every change of the namespace, per path: when (on [`State::clock`]) and the inode it then named (`None`:
    /// removed). What a crash that keeps some unsynced metadata reads ([`MemFs::recover_harsh`]).
    history: BTreeMap<PathBuf, Vec<(u64, Option<usize>)>>,
    /// When each directory was last synced, on the clock.
    dir_synced: BTreeMap<PathBuf, u64>,
    /// When each directory was made, on the clock.
    dir_made: BTreeMap<PathBuf, u64>,
    /// Changes of the namespace so far.
    clock: u64,
    /// Where an append the crash interrupts keeps part of its bytes, its seed.
    torn_append: Option<u64>,
}

impl State {
    /// Counts a mutating call; fails it (and every later call) once the countdown runs out.
    fn tick(&mut self) -> io::Result<()> {
        self.alive()?;
        self.calls += 1;
        if let Some(left) = self.countdown.as_mut() {
            if *left == 0 {
                self.crashed = true;
                return Err(crashed());
            }
            *left -= 1;
        }
        Ok(())
    }

    fn alive(&self) -> io::Result<()> {
        if self.crashed {
            Err(crashed())
        } else {
            Ok(())
        }
    }

    fn inode(&mut self, path: &Path) -> io::Result<usize> {
        self.files
            .get(path)
            .copied()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, path.display().to_string()))
    }

    /// Names `ino` by `path` (`None`: removes the name), as of the next tick of the clock.
    fn name(&mut self, path: &Path, ino: Option<usize>) {
        self.clock += 1;
        self.name_now(path, ino);
    }

    /// Names `ino` by `path` (`None`: removes the name) at the clock's present tick (a rename's two names
    /// change at one tick: a crash keeps both changes or neither).
    fn name_now(&mut self, path: &Path, ino: Option<usize>) {
        match ino {
            Some(ino) => self.files.insert(path.to_path_buf(), ino),
            None => self.files.remove(path),
        };
        self.history
            .entry(path.to_path_buf())
            .or_default()
            .push((self.clock, ino));
    }

    /// The clock and history of a state whose every file and directory is durable (a crash image).
    fn settle(&mut self) {
        self.clock = 1;
        self.history = self
            .files
            .iter()
            .map(|(p, &ino)| (p.clone(), vec![(1, Some(ino))]))
            .collect();
        self.dir_synced = self.dirs.iter().map(|d| (d.clone(), 1)).collect();
        self.dir_made = self.dirs.iter().map(|d| (d.clone(), 0)).collect();
    }

    fn need_dir(&self, path: &Path) -> io::Result<()> {
        if self.dirs.contains(parent_of(path)) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no directory {}", parent_of(path).display()),
            ))
        }
    }
}

fn crashed() -> io::Error {
    io::Error::other("the storage crashed (fault injection)")
}

/// An in-memory file system that can be crashed at any call and opened again as the crash left it.
///
/// A crash keeps, of each file, the bytes its last `sync` covered (a file later cut shorter keeps the shorter
/// length), and of each directory the entries its last `sync_dir` saw: a file created but never covered by a
/// `sync_dir` of its directory is gone, a rename not covered is undone. A directory survives once its parent
/// was synced after its creation; `/` always does. After the crash every call fails, as if the process had
/// died with the machine. Cloning gives another handle on the same file system.
#[derive(Clone, Default)]
pub struct MemFs(Arc<Mutex<State>>);

impl MemFs {
    /// An empty file system with only `/`.
    pub fn new() -> Self {
        let fs = MemFs::default();
        {
            let mut s = fs.0.lock();
            s.dirs.insert(PathBuf::from("/"));
            s.durable_dirs.insert(PathBuf::from("/"));
            s.dir_made.insert(PathBuf::from("/"), 0);
        }
        fs
    }

    /// Lets `n` more mutating calls (create, append, sync, set length, rename, remove, make or sync a
    /// directory) succeed; the next one fails and crashes the file system.
    pub fn crash_after(&self, n: u64) {
        self.0.lock().countdown = Some(n);
    }

    /// Lets `n` more mutating calls succeed and crashes the file system in the next one, as
    /// [`MemFs::crash_after`] does; an append that the crash interrupts leaves part of its bytes in the file (the
    /// part drawn from `seed`), as a write cut short by a power loss can.
    pub fn crash_after_seeded(&self, n: u64, seed: u64) {
        let mut s = self.0.lock();
        s.countdown = Some(n);
        s.torn_append = Some(seed);
    }

    /// Crashes now: every later call fails.
    pub fn crash(&self) {
        self.0.lock().crashed = true;
    }

    /// Whether the file system has crashed.
    pub fn crashed(&self) -> bool {
        self.0.lock().crashed
    }

    /// Mutating calls made so far.
    pub fn calls(&self) -> u64 {
        self.0.lock().calls
    }

    /// A new file system as a process killed now leaves it while the machine stays up: everything written is
    /// still there (the page cache survives), and what is durable is what was durable, so a later crash of the
    /// new one keeps only that and what is synced from now on.
    pub fn restart(&self) -> MemFs {
        let s = self.0.lock();
        MemFs(Arc::new(Mutex::new(State {
            inodes: s.inodes.clone(),
            files: s.files.clone(),
            durable: s.durable.clone(),
            dirs: s.dirs.clone(),
            durable_dirs: s.durable_dirs.clone(),
            history: s.history.clone(),
            dir_synced: s.dir_synced.clone(),
            dir_made: s.dir_made.clone(),
            clock: s.clock,
            ..State::default()
        })))
    }

    /// A new file system holding what a crash now would keep (only synced bytes and entries).
    pub fn recover(&self) -> MemFs {
        self.recover_torn(|_, _| 0)
    }

    /// As [`MemFs::recover`], but each surviving file also keeps `extra(path, unsynced)` of the bytes written
    /// after its last sync (capped at `unsynced`), as when the OS wrote part of them back before the crash: a
    /// torn tail.
    pub fn recover_torn(&self, mut extra: impl FnMut(&Path, usize) -> usize) -> MemFs {
        let s = self.0.lock();
        // a directory survives when it and every ancestor were made durable in their parents
        let dirs: BTreeSet<PathBuf> = s
            .durable_dirs
            .iter()
            .filter(|d| d.ancestors().all(|a| s.durable_dirs.contains(a)))
            .cloned()
            .collect();
        let mut out = State {
            dirs: dirs.clone(),
            durable_dirs: dirs,
            ..State::default()
        };
        for (path, &ino) in &s.durable {
            if !out.dirs.contains(parent_of(path)) {
                continue;
            }
            let node = &s.inodes[ino];
            let keep = node.synced
                + extra(path, node.data.len() - node.synced).min(node.data.len() - node.synced);
            let data = node.data[..keep].to_vec();
            out.files.insert(path.clone(), out.inodes.len());
            out.durable.insert(path.clone(), out.inodes.len());
            out.inodes.push(Inode {
                synced: data.len(),
                data,
            });
        }
        out.settle();
        MemFs(Arc::new(Mutex::new(out)))
    }

    fn handle(&self, ino: usize) -> Arc<MemFile> {
        Arc::new(MemFile {
            fs: self.0.clone(),
            ino,
        })
    }
}

struct MemFile {
    fs: Arc<Mutex<State>>,
    ino: usize,
}

impl WriteFile for MemFile {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let mut s = self.fs.lock();
        let crashing = !s.crashed && s.countdown == Some(0);
        if let Err(e) = s.tick() {
            // a crash in the middle of the write: part of its bytes reached the file
            if let (true, Some(seed)) = (crashing, s.torn_append) {
                let keep = StdRng::seed_from_u64(seed ^ s.calls).random_range(0..=bytes.len());
                s.inodes[self.ino].data.extend_from_slice(&bytes[..keep]);
            }
            return Err(e);
        }
        s.inodes[self.ino].data.extend_from_slice(bytes);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        let mut s = self.fs.lock();
        s.tick()?;
        let node = &mut s.inodes[self.ino];
        node.synced = node.data.len();
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut s = self.fs.lock();
        s.tick()?;
        let len = usize::try_from(len).map_err(io::Error::other)?;
        let node = &mut s.inodes[self.ino];
        node.data.resize(len, 0);
        node.synced = node.synced.min(len);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let s = self.fs.lock();
        s.alive()?;
        Ok(s.inodes[self.ino].data.len() as u64)
    }
}

impl ReadFile for MemFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let s = self.fs.lock();
        s.alive()?;
        let data = &s.inodes[self.ino].data;
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| data.get(start..end))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        WriteFile::len(self)
    }
}

struct LockGuard {
    fs: Arc<Mutex<State>>,
    path: PathBuf,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        self.fs.lock().locks.remove(&self.path);
    }
}

impl Fs for MemFs {
    fn create(&self, path: &Path, exclusive: bool) -> io::Result<Arc<dyn WriteFile>> {
        let mut s = self.0.lock();
        s.tick()?;
        s.need_dir(path)?;
        if exclusive && s.files.contains_key(path) {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        let ino = s.inodes.len();
        s.inodes.push(Inode::default());
        s.name(path, Some(ino));
        Ok(self.handle(ino))
    }

    fn open_append(&self, path: &Path) -> io::Result<Arc<dyn WriteFile>> {
        let ino = {
            let s = self.0.lock();
            match s.files.get(path) {
                Some(&ino) => {
                    s.alive()?;
                    ino
                }
                None => {
                    drop(s);
                    return self.create(path, true);
                }
            }
        };
        Ok(self.handle(ino))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn ReadFile>> {
        let mut s = self.0.lock();
        s.alive()?;
        let ino = s.inode(path)?;
        Ok(self.handle(ino))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.0.lock();
        s.tick()?;
        s.need_dir(to)?;
        let ino = s.inode(from)?;
        s.name(from, None);
        s.name_now(to, Some(ino));
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut s = self.0.lock();
        s.tick()?;
        s.inode(path)?;
        s.name(path, None);
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.0.lock();
        s.alive()?;
        if !s.dirs.contains(dir) {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(s.files
            .keys()
            .filter(|p| parent_of(p) == dir)
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect())
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.0.lock().dirs.contains(path)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.0.lock();
        s.tick()?;
        for a in dir.ancestors() {
            if !a.as_os_str().is_empty() && s.dirs.insert(a.to_path_buf()) {
                s.clock += 1;
                let now = s.clock;
                s.dir_made.insert(a.to_path_buf(), now);
            }
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.0.lock();
        s.tick()?;
        if !s.dirs.contains(dir) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let now = s.clock;
        s.dir_synced.insert(dir.to_path_buf(), now);
        let State {
            files,
            durable,
            dirs,
            durable_dirs,
            ..
        } = &mut *s;
        durable.retain(|p, _| parent_of(p) != dir);
        for (p, ino) in files.iter().filter(|(p, _)| parent_of(p) == dir) {
            durable.insert(p.clone(), *ino);
        }
        durable_dirs.retain(|d| d.parent() != Some(dir));
        for d in dirs.iter().filter(|d| d.parent() == Some(dir)) {
            durable_dirs.insert(d.clone());
        }
        Ok(())
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Any + Send + Sync>> {
        let mut s = self.0.lock();
        s.alive()?;
        s.need_dir(path)?;
        if !s.locks.insert(path.to_path_buf()) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(Box::new(LockGuard {
            fs: self.0.clone(),
            path: path.to_path_buf(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn p(s: &str) -> &Path {
        Path::new(s)
    }

    #[test]
    fn a_crash_keeps_only_synced_bytes_and_synced_entries() {
        let fs = MemFs::new();
        fs.create_dir_all(p("/db")).unwrap();
        let a = fs.create(p("/db/a"), true).unwrap();
        a.append(b"durable").unwrap();
        a.sync().unwrap();
        a.append(b" lost").unwrap();
        // the directory entry is not durable yet: a crash now loses the file
        assert!(fs.recover().open_read(p("/db/a")).is_err());
        fs.sync_dir(p("/")).unwrap();
        fs.sync_dir(p("/db")).unwrap();
        let b = fs.create(p("/db/b"), true).unwrap();
        b.append(b"never synced").unwrap();
        let after = crate::Storage::new(fs.recover());
        assert_eq!(after.read(p("/db/a")).unwrap(), b"durable");
        assert!(after.read(p("/db/b")).is_err());
        // a torn tail keeps part of the unsynced bytes
        let torn = crate::Storage::new(fs.recover_torn(|_, n| n / 2 + 1));
        assert_eq!(torn.read(p("/db/a")).unwrap(), b"durable lo");
    }

    #[test]
    fn renames_and_removes_need_a_directory_sync() {
        let fs = MemFs::new();
        let f = fs.create(p("/x"), true).unwrap();
        f.append(b"1").unwrap();
        f.sync().unwrap();
        fs.sync_dir(p("/")).unwrap();
        fs.rename(p("/x"), p("/y")).unwrap();
        assert_eq!(fs.recover().list(p("/")).unwrap(), vec!["x"]);
        fs.sync_dir(p("/")).unwrap();
        assert_eq!(fs.recover().list(p("/")).unwrap(), vec!["y"]);
        fs.remove(p("/y")).unwrap();
        assert_eq!(fs.recover().list(p("/")).unwrap(), vec!["y"]);
        fs.sync_dir(p("/")).unwrap();
        assert!(fs.recover().list(p("/")).unwrap().is_empty());
    }

    #[test]
    fn crash_after_fails_the_next_call_and_all_later_ones() {
        let fs = MemFs::new();
        fs.crash_after(1);
        let f = fs.create(p("/f"), true).unwrap();
        assert!(f.append(b"x").is_err());
        assert!(fs.crashed());
        assert!(fs.create(p("/g"), true).is_err());
        assert!(fs.list(p("/")).is_err());
        assert_eq!(fs.calls(), 2);
    }

    #[test]
    fn a_new_directory_survives_once_its_parent_is_synced() {
        let fs = MemFs::new();
        fs.create_dir_all(p("/a/b")).unwrap();
        fs.sync_dir(p("/a")).unwrap();
        // /a itself was never made durable in /
        assert!(!fs.recover().is_dir(p("/a/b")));
        fs.sync_dir(p("/")).unwrap();
        let r = fs.recover();
        assert!(r.is_dir(p("/a")) && r.is_dir(p("/a/b")));
    }

    #[test]
    fn a_restart_keeps_what_was_written_and_a_later_crash_only_what_was_synced() {
        let fs = MemFs::new();
        let f = fs.create(p("/f"), true).unwrap();
        f.append(b"synced").unwrap();
        f.sync().unwrap();
        fs.sync_dir(p("/")).unwrap();
        f.append(b" cached").unwrap();
        fs.crash();
        let up = fs.restart();
        assert_eq!(
            crate::Storage::new(up.clone()).read(p("/f")).unwrap(),
            b"synced cached"
        );
        assert_eq!(
            crate::Storage::new(up.recover()).read(p("/f")).unwrap(),
            b"synced"
        );
        // what the restarted process syncs becomes durable
        up.open_append(p("/f")).unwrap().sync().unwrap();
        assert_eq!(
            crate::Storage::new(up.recover()).read(p("/f")).unwrap(),
            b"synced cached"
        );
    }

    #[test]
    fn locks_exclude_until_dropped() {
        let fs = MemFs::new();
        let g = fs.lock(p("/LOCK")).unwrap();
        assert_eq!(
            fs.lock(p("/LOCK")).err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock)
        );
        drop(g);
        assert!(fs.lock(p("/LOCK")).is_ok());
    }
}
