//! WiredTiger through a thin FFI of our own to Debian's libwiredtiger 3.2.1 (the `wiredtiger` crate targets
//! WiredTiger 12). Only the leading members of WiredTiger's method tables that we call are declared, in the
//! order of `wiredtiger.h`; the structures are only ever used through pointers WiredTiger hands out.

use super::common::Stripes;
use super::os::{proc_io, quiet_wait};
use cosine_ycsb::{IoCounters, Store, StoreResult};
use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr::null_mut;
use std::sync::Mutex;

const WT_NOTFOUND: c_int = -31803;

#[repr(C)]
struct Item {
    data: *const c_void,
    size: usize,
    mem: *mut c_void,
    memsize: usize,
    flags: u32,
}

type Op = unsafe extern "C" fn(*mut Cursor) -> c_int;

#[repr(C)]
struct Cursor {
    session: *mut Session,
    uri: *const c_char,
    key_format: *const c_char,
    value_format: *const c_char,
    get_key: unsafe extern "C" fn(*mut Cursor, ...) -> c_int,
    get_value: unsafe extern "C" fn(*mut Cursor, ...) -> c_int,
    set_key: unsafe extern "C" fn(*mut Cursor, ...),
    set_value: unsafe extern "C" fn(*mut Cursor, ...),
    compare: *const c_void,
    equals: *const c_void,
    next: Op,
    prev: Op,
    reset: Op,
    search: Op,
    search_near: unsafe extern "C" fn(*mut Cursor, *mut c_int) -> c_int,
    insert: Op,
    modify: *const c_void,
    update: Op,
    remove: Op,
    reserve: Op,
    close: Op,
}

#[repr(C)]
struct Session {
    connection: *mut Connection,
    app_private: *mut c_void,
    close: unsafe extern "C" fn(*mut Session, *const c_char) -> c_int,
    reconfigure: *const c_void,
    strerror: *const c_void,
    open_cursor: unsafe extern "C" fn(
        *mut Session,
        *const c_char,
        *mut Cursor,
        *const c_char,
        *mut *mut Cursor,
    ) -> c_int,
    alter: *const c_void,
    create: unsafe extern "C" fn(*mut Session, *const c_char, *const c_char) -> c_int,
    // import, compact, drop, join, log_flush, log_printf, rebalance, rename, reset, salvage, truncate,
    // upgrade, verify, begin/commit/prepare/rollback/timestamp_transaction, query_timestamp
    _unused: [*const c_void; 19],
    checkpoint: unsafe extern "C" fn(*mut Session, *const c_char) -> c_int,
}

#[repr(C)]
struct Connection {
    async_flush: *const c_void,
    async_new_op: *const c_void,
    close: unsafe extern "C" fn(*mut Connection, *const c_char) -> c_int,
    debug_info: *const c_void,
    reconfigure: *const c_void,
    get_home: *const c_void,
    configure_method: *const c_void,
    is_new: *const c_void,
    open_session: unsafe extern "C" fn(
        *mut Connection,
        *mut c_void,
        *const c_char,
        *mut *mut Session,
    ) -> c_int,
}

// the one entry point of the library (wiredtiger.h); every other call goes through the method tables above
#[link(name = "wiredtiger")]
extern "C" {
    fn wiredtiger_open(
        home: *const c_char,
        handler: *mut c_void,
        config: *const c_char,
        conn: *mut *mut Connection,
    ) -> c_int;
}

/// A session with one open cursor (WiredTiger sessions are single-threaded; the store keeps a pool).
struct Handle {
    session: *mut Session,
    cursor: *mut Cursor,
}
// SAFETY: a session and its cursor may be used from any thread, one thread at a time (WiredTiger's rule for
// sessions); a handle is only ever used by the thread that took it out of the pool, and only one takes it
unsafe impl Send for Handle {}

/// WiredTiger with a B-tree (`type=file`) or LSM (`type=lsm`) table, its cache set to the memory budget,
/// its write-ahead log on (each commit handed to the OS, or fsynced with `durable`), no compression; the
/// B-tree's files mapped for reads (WiredTiger's default), the LSM table's not.
pub struct WiredTiger {
    conn: *mut Connection,
    uri: CString,
    pool: Mutex<Vec<Handle>>,
    table: Table,
    chunk_bytes: u64,
    stripes: Stripes,
}
// SAFETY: the connection handle is thread-safe in WiredTiger (`WT_CONNECTION` methods may be called from any
// thread at once); sessions and cursors, which are not, are reached only through the pool's mutex, one thread
// per handle at a time
unsafe impl Send for WiredTiger {}
// SAFETY: as for Send: shared use reaches the connection (thread-safe) and the pool (behind its mutex) only
unsafe impl Sync for WiredTiger {}

/// The largest leaf page of the `wiredtiger` engine's B-tree (`wiredtiger-32k` keeps WiredTiger's default,
/// 32 KB, as every run before b30a843 did). Under the 128 MiB cap with 1,000-byte values, one round a size,
/// run one after another at 78e4b97 with the size set from the environment for that measurement
/// (BENCHMARKS.md, "WiredTiger's leaf pages"): A ran at 12,900-14,500 ops/s with 32 KB leaves, 17,300 with
/// 16 KB, 20,600-21,200 with 8 KB, and was killed by the OOM killer with 4 KB (files mapped or not); C at
/// 19,000-20,000, 22,800, 25,200-28,100. A point read that misses reads a whole leaf: the device reads an
/// operation stayed the same and their bytes fell 3.4-3.7× from 32 KB to 8 KB. Scans pay: side by side at
/// f5ef41d (`--engines wiredtiger,wiredtiger-32k --workloads ycsb-c,ycsb-e`, 3 rotated rounds) 8 KB ran C at
/// 1.29× (1.25-1.47) the default's ops/s and E at 0.42× (0.40-0.42). The LSM table keeps the default: its
/// load with 8 KB leaves hung (writers waiting in `__wt_clsm_await_switch` while the chunk checkpoint waited
/// on a lock).
pub const LEAF_PAGE_MAX: &str = "8KB";

/// The table a store runs on, and the engine name the harness knows it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// `wiredtiger`: the B-tree with leaves of at most [`LEAF_PAGE_MAX`].
    BTree,
    /// `wiredtiger-32k`: the B-tree with WiredTiger's default leaves (32 KB).
    BTreeDefaultLeaves,
    /// `wiredtiger-lsm`: the LSM table with chunks of a quarter of the cache, WiredTiger's default leaves.
    Lsm,
}

impl Table {
    /// Every table, in the order `cosine-peers` lists them.
    pub const ALL: [Table; 3] = [Table::BTree, Table::BTreeDefaultLeaves, Table::Lsm];

    /// The table an engine name of `cosine-peers --engines` runs on; None for any other name.
    pub fn named(engine: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.engine() == engine)
    }

    /// The engine name of `cosine-peers --engines`.
    pub fn engine(self) -> &'static str {
        match self {
            Table::BTree => "wiredtiger",
            Table::BTreeDefaultLeaves => "wiredtiger-32k",
            Table::Lsm => "wiredtiger-lsm",
        }
    }

    /// The `leaf_page_max` the table is created with; None keeps WiredTiger's default (32 KB).
    pub fn leaf_page_max(self) -> Option<&'static str> {
        match self {
            Table::BTree => Some(LEAF_PAGE_MAX),
            Table::BTreeDefaultLeaves | Table::Lsm => None,
        }
    }

    /// The `WT_SESSION::create` configuration of the table.
    fn create_config(self, chunk_bytes: u64) -> String {
        let mut c = "key_format=u,value_format=u".to_string();
        if let Some(leaf) = self.leaf_page_max() {
            c += &format!(",leaf_page_max={leaf}");
        }
        if self == Table::Lsm {
            c += &format!(",type=lsm,lsm=(chunk_size={chunk_bytes})");
        }
        c
    }
}

fn check(rc: c_int, what: &str) -> StoreResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("wiredtiger {what} failed with {rc}").into())
    }
}

impl WiredTiger {
    pub fn open(
        memory: u64,
        dir: &std::path::Path,
        table: Table,
        durable: bool,
    ) -> anyhow::Result<Self> {
        let home = CString::new(dir.to_string_lossy().as_bytes())?;
        // the write-ahead log on, each commit written to the OS (`method=none`) or fsynced; no
        // compression (WiredTiger's default block_compressor is none). Files are mapped for reads (the
        // default) for the B-tree and not for the LSM table, each table's faster way under a 128 MiB cap
        // (BENCHMARKS: the LSM table ran A at 551 ops/s mapped and 33,902 unmapped; the B-tree at
        // 0.37-0.73x RocksDB unmapped against 0.51-0.79x mapped)
        let config = CString::new(format!(
            "create,cache_size={}MB,log=(enabled=true),transaction_sync=(enabled=true,method={}),mmap={}",
            (memory >> 20).max(1),
            if durable { "fsync" } else { "none" },
            table != Table::Lsm
        ))?;
        let mut conn = null_mut();
        check(
            // SAFETY: `home` and `config` are NUL-terminated and outlive the call; `conn` is a valid place for
            // the connection WiredTiger hands back; no event handler
            unsafe { wiredtiger_open(home.as_ptr(), null_mut(), config.as_ptr(), &mut conn) },
            "open",
        )
        .map_err(anyhow::Error::msg)?;
        let uri = CString::new("table:ycsb")?;
        // LSM chunks must fit the cache: a quarter of it, at least 512 KiB
        let store = WiredTiger {
            conn,
            uri,
            pool: Mutex::new(Vec::new()),
            table,
            chunk_bytes: (memory / 4).max(512 << 10),
            stripes: Stripes::new(),
        };
        let h = store.handle_new(true).map_err(anyhow::Error::msg)?;
        store.pool.lock().unwrap_or_else(|p| p.into_inner()).push(h);
        Ok(store)
    }

    /// Opens a session on the connection (the caller closes it, or its handle keeps it).
    fn session_new(&self) -> StoreResult<*mut Session> {
        let mut session = null_mut();
        check(
            // SAFETY: the connection is open until `drop`; `session` is a valid place for the session handed
            // back; no event handler and no configuration
            unsafe {
                ((*self.conn).open_session)(self.conn, null_mut(), std::ptr::null(), &mut session)
            },
            "open_session",
        )?;
        Ok(session)
    }

    fn handle_new(&self, create: bool) -> StoreResult<Handle> {
        // SAFETY: `session` was just opened and is used by this thread alone; the URI and configuration are
        // NUL-terminated and outlive the calls; `cursor` is a valid place for the cursor handed back
        unsafe {
            let session = self.session_new()?;
            if create {
                let cfg = CString::new(self.table.create_config(self.chunk_bytes))
                    .map_err(|e| e.to_string())?;
                check(
                    ((*session).create)(session, self.uri.as_ptr(), cfg.as_ptr()),
                    "create",
                )?;
            }
            let mut cursor = null_mut();
            check(
                ((*session).open_cursor)(
                    session,
                    self.uri.as_ptr(),
                    null_mut(),
                    std::ptr::null(),
                    &mut cursor,
                ),
                "open_cursor",
            )?;
            Ok(Handle { session, cursor })
        }
    }

    fn with<T>(&self, f: impl FnOnce(*mut Cursor) -> StoreResult<T>) -> StoreResult<T> {
        let h = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let h = match h {
            Some(h) => h,
            None => self.handle_new(false)?,
        };
        let r = f(h.cursor);
        // SAFETY: the cursor is open, and this thread holds its handle (taken out of the pool)
        unsafe {
            ((*h.cursor).reset)(h.cursor);
        }
        self.pool.lock().unwrap_or_else(|p| p.into_inner()).push(h);
        r
    }

    fn item(b: &[u8]) -> Item {
        Item {
            data: b.as_ptr() as *const c_void,
            size: b.len(),
            mem: null_mut(),
            memsize: 0,
            flags: 0,
        }
    }

    fn put(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
        // SAFETY: `c` is an open cursor this thread holds; with `key_format=u,value_format=u`, set_key and
        // set_value take a `WT_ITEM` pointer, and `key` and `value` (and the slices they point at) outlive the
        // insert, which copies them
        self.with(|c| unsafe {
            let (key, value) = (Self::item(k), Self::item(v));
            ((*c).set_key)(c, &key as *const Item);
            ((*c).set_value)(c, &value as *const Item);
            check(((*c).insert)(c), "insert")
        })
    }

    /// The cursor's current key (`get_key`) or value (`get_value`), copied out.
    fn item_of(
        c: *mut Cursor,
        get: unsafe extern "C" fn(*mut Cursor, ...) -> c_int,
        what: &str,
    ) -> StoreResult<Vec<u8>> {
        // SAFETY: `c` is an open cursor positioned on a record (its caller's search or next returned 0); `get`
        // is its get_key or get_value, which with format `u` fill the `WT_ITEM` passed; the bytes it points at
        // stay valid until the cursor moves, and are copied out before
        unsafe {
            let mut out = Item {
                data: std::ptr::null(),
                size: 0,
                mem: null_mut(),
                memsize: 0,
                flags: 0,
            };
            check(get(c, &mut out as *mut Item), what)?;
            Ok(std::slice::from_raw_parts(out.data as *const u8, out.size).to_vec())
        }
    }

    fn key_of(c: *mut Cursor) -> StoreResult<Vec<u8>> {
        // SAFETY: `c` is an open cursor (a valid pointer to WiredTiger's method table)
        Self::item_of(c, unsafe { (*c).get_key }, "get_key")
    }

    fn value_of(c: *mut Cursor) -> StoreResult<Vec<u8>> {
        // SAFETY: as in `key_of`
        Self::item_of(c, unsafe { (*c).get_value }, "get_value")
    }
}

impl Drop for WiredTiger {
    fn drop(&mut self) {
        let handles = std::mem::take(&mut *self.pool.lock().unwrap_or_else(|p| p.into_inner()));
        // SAFETY: every handle is back in the pool (`with` returns it before it returns) and none is used
        // again; closing a session closes its cursor; the connection is closed last and never used after
        unsafe {
            for h in handles {
                ((*h.session).close)(h.session, std::ptr::null());
            }
            ((*self.conn).close)(self.conn, std::ptr::null());
        }
    }
}

impl Store for WiredTiger {
    fn name(&self) -> String {
        self.table.engine().into()
    }
    fn insert(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
        self.put(k, v)
    }
    fn read(&self, k: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        // SAFETY: `c` is an open cursor this thread holds; `key` outlives the search; the value is read only
        // when the search found the record
        self.with(|c| unsafe {
            let key = Self::item(k);
            ((*c).set_key)(c, &key as *const Item);
            match ((*c).search)(c) {
                0 => Self::value_of(c).map(Some),
                WT_NOTFOUND => Ok(None),
                rc => Err(format!("wiredtiger search failed with {rc}").into()),
            }
        })
    }
    fn update(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
        self.put(k, v)
    }
    fn scan(&self, start: &[u8], n: usize) -> StoreResult<Vec<(Vec<u8>, Vec<u8>)>> {
        // SAFETY: `c` is an open cursor this thread holds; `key` outlives search_near; key and value are read
        // only while the cursor is positioned on a record (search_near or next returned 0)
        self.with(|c| unsafe {
            let key = Self::item(start);
            ((*c).set_key)(c, &key as *const Item);
            let mut exact: c_int = 0;
            let mut out = Vec::with_capacity(n.min(1024));
            match ((*c).search_near)(c, &mut exact) {
                0 => {}
                WT_NOTFOUND => return Ok(out),
                rc => return Err(format!("wiredtiger search_near failed with {rc}").into()),
            }
            if exact < 0 && ((*c).next)(c) != 0 {
                return Ok(out);
            }
            loop {
                out.push((Self::key_of(c)?, Self::value_of(c)?));
                if out.len() >= n || ((*c).next)(c) != 0 {
                    return Ok(out);
                }
            }
        })
    }
    fn read_modify_write(
        &self,
        k: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> StoreResult<()> {
        // WiredTiger's own snapshot isolation would need transactions; the adapter serialises rmws per key
        self.stripes
            .modify(k, f, || self.read(k), |v| self.put(k, v))
    }
    fn io(&self) -> Option<IoCounters> {
        proc_io()
    }
    /// Takes a checkpoint (`WT_SESSION::checkpoint`: every dirty page of the cache written out; for an LSM
    /// table, whether it also flushes the in-memory chunk is not checked here), then waits until the
    /// process has written nothing for a second: LSM merges and eviction run in WiredTiger's own threads,
    /// and no call of its API reports them.
    fn settle(&self) -> StoreResult<()> {
        // SAFETY: the session was just opened, is used by this thread alone and closed once, after the
        // checkpoint
        unsafe {
            let session = self.session_new()?;
            let rc = ((*session).checkpoint)(session, std::ptr::null());
            ((*session).close)(session, std::ptr::null());
            check(rc, "checkpoint")?;
        }
        quiet_wait()
    }
}
