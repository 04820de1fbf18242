//! FASTER (Microsoft's C++ hybrid-log key-value store, built from the sources libfaster-sys 0.11 vendors) through
//! our C interface `faster/shim.cc`.

use super::common::Stripes;
use super::os::{proc_io, quiet_wait};
use anyhow::{anyhow, bail, Result};
use cosine_ycsb::{IoCounters, Store, StoreError, StoreResult};
use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};

type ReadCallback = unsafe extern "C" fn(*mut c_void, *const u8, u64);

// faster/shim.cc (declared as it defines them); every operation runs in the calling thread's FASTER session,
// which the shim starts on first use and ends when the thread exits
unsafe extern "C" {
    fn cosine_faster_open(
        table_size: u64,
        log_size: u64,
        dir: *const c_char,
        mutable_fraction: f64,
        token: *const c_char,
        error: *mut c_char,
        capacity: usize,
    ) -> *mut c_void;
    fn cosine_faster_close(
        store: *mut c_void,
        checkpoint: bool,
        token: *mut c_char,
        wait_ms: u64,
    ) -> i32;
    fn cosine_faster_end_session(store: *mut c_void);
    fn cosine_faster_upsert(
        store: *mut c_void,
        key: *const u8,
        key_length: u64,
        value: *const u8,
        length: u64,
    ) -> u8;
    fn cosine_faster_read(
        store: *mut c_void,
        key: *const u8,
        key_length: u64,
        callback: ReadCallback,
        target: *mut c_void,
    ) -> u8;
}

/// FASTER's log pages are 32 MiB (`Address::kOffsetBits` = 25), and its in-memory log needs at least six
/// of them: two mutable and four read-only ("head") pages.
pub const PAGE: u64 = 32 << 20;
/// The smallest memory budget FASTER can run in: six log pages and a 32 MiB hash index.
pub const MIN_MEMORY: u64 = 6 * PAGE + (32 << 20);

/// How a memory budget M is split: the in-memory log takes the largest whole number of 32 MiB pages within
/// 3M/4 (at least six), the hash index the largest power of two of 64-byte buckets in what is left; the
/// newest pages, all but four (at most 90%, FASTER's default), are mutable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// Hash buckets (64 bytes each; a power of two).
    pub table_size: u64,
    /// In-memory log bytes.
    pub log_size: u64,
    /// The share of the in-memory log that is mutable (updates in place).
    pub mutable_fraction: f64,
}

impl Split {
    /// The split of `memory` bytes; an error below [`MIN_MEMORY`].
    pub fn of(memory: u64) -> Result<Split> {
        if memory < MIN_MEMORY {
            bail!(
                "FASTER needs at least {} MiB (six 32 MiB log pages and a 32 MiB hash index); --memory is {} MiB",
                MIN_MEMORY >> 20,
                memory >> 20
            );
        }
        let pages = (memory / 4 * 3 / PAGE).max(6);
        let log_size = pages * PAGE;
        let table_size = 1u64 << ((memory - log_size) / 64).ilog2();
        let mutable = (pages - 4).min(pages * 9 / 10).max(2);
        Ok(Split {
            table_size,
            log_size,
            mutable_fraction: (mutable as f64 + 0.5) / pages as f64,
        })
    }
}

/// FASTER with a memory budget split by [`Split`]; its log on disk in the store's directory (O_DIRECT,
/// libaio). Durability: FASTER keeps new records in its in-memory log and writes them out a page at a time
/// as the log's tail moves on, and makes them durable at checkpoints (CPR); it has no per-write hand-off to
/// the OS and no per-write fsync, a weaker promise than the other engines' (stated in the table).
/// Read-modify-write is a lock, a read and an upsert (as for the other peers; an upsert of a record in the
/// mutable region overwrites it in place). FASTER has no ordered scan. Closing takes a checkpoint, and
/// opening a directory that holds one recovers it.
///
/// A thread that holds a session and then waits for other threads stalls the log's epochs, and with them
/// those threads once the in-memory log is full: [`Store::settle`] ends the caller's session, and the
/// harness runs every phase's operations in threads of their own.
pub struct Faster {
    store: *mut c_void,
    split: Split,
    dir: PathBuf,
    stripes: Stripes,
    /// Whether anything was written since the store was opened: FASTER's checkpoint state machine never
    /// finishes a checkpoint with nothing to fold over, and the last checkpoint still holds everything.
    written: std::sync::atomic::AtomicBool,
}

// SAFETY: FASTER's store is made for concurrent use by threads that each hold a session, which the shim
// makes sure of for every operation
unsafe impl Send for Faster {}
// SAFETY: every operation through `&Faster` runs in the calling thread's own FASTER session (the shim's), which
// is how FASTER is made to be shared; `written` is atomic and `stripes` a set of mutexes
unsafe impl Sync for Faster {}

/// The file in a store's directory naming its last checkpoint (token, then the hash table's size).
const CHECKPOINT: &str = "cosine-faster-checkpoint";

fn c_path(p: &Path) -> Result<CString> {
    CString::new(p.to_string_lossy().as_bytes()).map_err(|_| anyhow!("a NUL in {}", p.display()))
}

impl Faster {
    /// Opens (or recovers) FASTER in `dir` with `memory` bytes.
    pub fn open(memory: u64, dir: &Path, durable: bool) -> Result<Faster> {
        if durable {
            bail!("FASTER makes writes durable only at checkpoints (CPR): it has no per-write fsync, so it cannot run --durable");
        }
        let mut split = Split::of(memory)?;
        let saved = std::fs::read_to_string(dir.join(CHECKPOINT)).ok();
        let token = match &saved {
            Some(text) => {
                let mut words = text.split_whitespace();
                let token = CString::new(words.next().unwrap_or_default())?;
                // the index is recovered at the size it was written with
                if let Some(t) = words.next().and_then(|t| t.parse().ok()) {
                    split.table_size = t;
                }
                Some(token)
            }
            None => None,
        };
        let mut error = vec![0 as c_char; 512];
        let path = c_path(dir)?;
        // SAFETY: the strings are NUL-terminated and outlive the call; `error` has the capacity given
        let store = unsafe {
            cosine_faster_open(
                split.table_size,
                split.log_size,
                path.as_ptr(),
                split.mutable_fraction,
                token.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()),
                error.as_mut_ptr(),
                error.len(),
            )
        };
        if store.is_null() {
            // SAFETY: the shim wrote a NUL-terminated message into `error`
            let msg = unsafe { std::ffi::CStr::from_ptr(error.as_ptr()) };
            bail!("FASTER: {}", msg.to_string_lossy());
        }
        Ok(Faster {
            store,
            split,
            dir: dir.to_path_buf(),
            stripes: Stripes::new(),
            written: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn put(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        // written once, read by every put: no store on the shared line after the first write
        if !self.written.load(std::sync::atomic::Ordering::Relaxed) {
            self.written
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: the store is open; the slices outlive the call and the shim copies what it keeps
        let status = unsafe {
            cosine_faster_upsert(
                self.store,
                key.as_ptr(),
                key.len() as u64,
                value.as_ptr(),
                value.len() as u64,
            )
        };
        match status {
            0 => Ok(()),
            s => Err(StoreError::Peer(format!("FASTER upsert: status {s}"))),
        }
    }
}

/// The shim's read callback: copies the value found into the `Option<Vec<u8>>` at `target`.
///
/// # Safety
/// `target` points at a live `Option<Vec<u8>>` no one else uses during the call, and `value` at `length` bytes.
unsafe extern "C" fn deliver(target: *mut c_void, value: *const u8, length: u64) {
    // SAFETY: `target` is the `Option<Vec<u8>>` `read` passed, alive until the read has completed; the
    // value's bytes are valid for the call
    unsafe {
        let out = &mut *(target as *mut Option<Vec<u8>>);
        *out = Some(std::slice::from_raw_parts(value, length as usize).to_vec());
    }
}

impl Store for Faster {
    fn name(&self) -> String {
        "faster".into()
    }
    fn insert(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.put(key, value)
    }
    fn read(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        let mut out: Option<Vec<u8>> = None;
        let target = &mut out as *mut Option<Vec<u8>> as *mut c_void;
        // SAFETY: the store is open; `key` outlives the call; `target` outlives the read, which completes
        // (from memory or from disk) before the call returns
        let status = unsafe {
            cosine_faster_read(self.store, key.as_ptr(), key.len() as u64, deliver, target)
        };
        match status {
            0 | 1 => Ok(out),
            2 => Ok(None),
            s => Err(StoreError::Peer(format!("FASTER read: status {s}"))),
        }
    }
    fn update(&self, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.put(key, value)
    }
    fn scan(&self, _start: &[u8], _count: usize) -> StoreResult<Vec<(Vec<u8>, Vec<u8>)>> {
        Err(StoreError::Peer("FASTER has no ordered scan".into()))
    }
    fn read_modify_write(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> StoreResult<()> {
        self.stripes
            .modify(key, f, || self.read(key), |v| self.put(key, v))
    }
    fn io(&self) -> Option<IoCounters> {
        proc_io()
    }
    /// FASTER runs no compaction (log compaction is an explicit call we never make); its only background
    /// work is writing out log pages, so settling is the harness's quiet wait (under 64 KiB written in
    /// each of two half-seconds). The calling thread's session ends first, so that it does not hold back
    /// the log's epochs while other threads run.
    fn settle(&self) -> StoreResult<()> {
        // SAFETY: the store is open
        unsafe { cosine_faster_end_session(self.store) };
        quiet_wait()
    }
}

impl Drop for Faster {
    /// Takes a checkpoint (so the directory can be reopened) once no other thread holds a session (waiting
    /// up to 10 s), and destroys the store. Nothing written since the store was opened: no checkpoint (the
    /// last one, if any, holds everything).
    fn drop(&mut self) {
        let mut token = vec![0 as c_char; 40];
        let written = self.written.load(std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the store is open, and is not used again; `token` has room for 37 bytes
        let closed =
            unsafe { cosine_faster_close(self.store, written, token.as_mut_ptr(), 10_000) };
        match closed {
            0 => {
                // SAFETY: the shim wrote a NUL-terminated token
                let token = unsafe { std::ffi::CStr::from_ptr(token.as_ptr()) };
                let _ = std::fs::write(
                    self.dir.join(CHECKPOINT),
                    format!("{} {}\n", token.to_string_lossy(), self.split.table_size),
                );
            }
            1 if written => eprintln!("faster: the closing checkpoint could not start"),
            1 => {}
            _ => eprintln!(
                "faster: a thread still held a session after 10 s; the store was left open"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_fits_the_budget_and_faster_s_rules() {
        for mib in [224u64, 256, 300, 512, 1024, 4096] {
            let m = mib << 20;
            let s = Split::of(m).unwrap();
            let pages = s.log_size / PAGE;
            let mutable = (s.mutable_fraction * pages as f64) as u64;
            assert!(
                pages >= 6 && mutable >= 2 && pages - mutable >= 4,
                "{mib} MiB: {s:?}"
            );
            assert!(s.table_size.is_power_of_two());
            assert!(s.log_size + 64 * s.table_size <= m, "{mib} MiB: {s:?}");
        }
        assert!(Split::of(MIN_MEMORY - 1).is_err());
    }

    fn value(i: u64, version: u64) -> Vec<u8> {
        // lengths vary, so some updates fit in place and some need a new record
        let len = 900 + ((i * 7 + version * 13) % 200) as usize;
        let mut v = format!("{i}:{version}:").into_bytes();
        v.resize(len, b'a' + (i % 26) as u8);
        v
    }

    /// More data than the in-memory log holds, so reads go to disk (pending operations: the case
    /// libfaster-sys's own C interface gets wrong); updates from two threads; every value read back; then
    /// closed (a checkpoint) and recovered, and read back again.
    #[test]
    fn reads_from_disk_updates_and_recovery_return_what_was_written() {
        let dir = std::env::temp_dir().join(format!("cosine-faster-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let n = 240_000u64; // about 240 MB, above the 192 MiB log
        let key = |i: u64| format!("user{:012}", i.wrapping_mul(0x9E37_79B9) % 1_000_000_007);
        {
            let s = Faster::open(MIN_MEMORY, &dir, false).unwrap();
            std::thread::scope(|t| {
                t.spawn(|| {
                    for i in 0..n {
                        s.insert(key(i).as_bytes(), &value(i, 0)).unwrap();
                    }
                });
            });
            std::thread::scope(|t| {
                for part in 0..2u64 {
                    let s = &s;
                    t.spawn(move || {
                        for i in (part..n).step_by(40) {
                            s.update(key(i).as_bytes(), &value(i, 1)).unwrap();
                        }
                    });
                }
            });
            std::thread::scope(|t| {
                t.spawn(|| {
                    s.read_modify_write(key(7).as_bytes(), &mut |old| {
                        assert_eq!(old, Some(&value(7, 0)[..]));
                        value(7, 2)
                    })
                    .unwrap();
                    s.settle().unwrap();
                    let want = |i: u64| match i {
                        7 => value(7, 2),
                        i if i % 40 <= 1 => value(i, 1),
                        i => value(i, 0),
                    };
                    for i in (0..n).step_by(97).chain([0, 1, 7, n - 1]) {
                        let got = s.read(key(i).as_bytes()).unwrap();
                        assert!(
                            got == Some(want(i)),
                            "record {i}: {:?}",
                            got.map(|v| v[..12].to_vec())
                        );
                    }
                    assert_eq!(s.read(b"user-none").unwrap(), None);
                    assert!(s.scan(b"user", 10).is_err());
                });
            });
        }
        let s = Faster::open(MIN_MEMORY, &dir, false).unwrap();
        for i in (0..n).step_by(89) {
            let want = match i {
                7 => value(7, 2),
                i if i % 40 <= 1 => value(i, 1),
                i => value(i, 0),
            };
            let got = s.read(key(i).as_bytes()).unwrap();
            assert!(
                got == Some(want),
                "after recovery, record {i}: {:?}",
                got.map(|v| v[..12].to_vec())
            );
        }
        // a write after a recovery is in the next checkpoint
        s.update(key(3).as_bytes(), &value(3, 9)).unwrap();
        s.settle().unwrap();
        drop(s);
        let s = Faster::open(MIN_MEMORY, &dir, false).unwrap();
        assert!(s.read(key(3).as_bytes()).unwrap() == Some(value(3, 9)));
        assert!(s.read(key(4).as_bytes()).unwrap() == Some(value(4, 0)));
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
