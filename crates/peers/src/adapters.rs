//! One adapter per peer engine behind `cosine_ycsb::Store`, each given the same memory budget. Engines that
//! do not count their own I/O report /proc/self/io (bytes the process read from and wrote to storage, in 4 KiB
//! units; reads served by the OS page cache do not count).

#![allow(dead_code)]

use anyhow::Result;
use cosine_ycsb::{IoCounters, Store};

/// Peer engines compiled into this build.
pub const AVAILABLE: &[&str] = if cfg!(feature = "wiredtiger") {
    &[
        "rocksdb",
        "fjall",
        "redb",
        "sled",
        "wiredtiger",
        "wiredtiger-lsm",
    ]
} else if cfg!(feature = "peers") {
    &["rocksdb", "fjall", "redb", "sled"]
} else {
    &[]
};

/// /proc/self/io as I/O counters.
pub fn proc_io() -> Option<IoCounters> {
    let s = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(IoCounters {
        reads: field("read_bytes:")? / 4096,
        background: field("write_bytes:")? / 4096,
    })
}

#[cfg(feature = "peers")]
/// Stripes that make the peers' read-modify-write atomic (none of them has one built in).
pub(crate) struct Stripes(Vec<std::sync::Mutex<()>>);
#[cfg(feature = "peers")]
impl Stripes {
    fn new() -> Self {
        Stripes((0..64).map(|_| std::sync::Mutex::new(())).collect())
    }
    fn lock(&self, key: &[u8]) -> std::sync::MutexGuard<'_, ()> {
        let h = key
            .iter()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(*b as u64));
        self.0[(h % 64) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(not(feature = "peers"))]
pub fn open(engine: &str, _memory: u64, _dir: &std::path::Path) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine '{engine}' needs the `peers` feature")
}

/// RocksDB configured with a leveled LSM design Cosine chose (the "RocksDB with Cosine's parameters" row).
#[cfg(feature = "peers")]
pub fn open_rocksdb_tuned(
    design: &cosine_design::Design,
    entries: u64,
    memory: u64,
    dir: &std::path::Path,
) -> Result<Box<dyn Store>> {
    Ok(Box::new(peers::Rocks::open_tuned(
        design, entries, memory, dir,
    )?))
}

/// Without the `peers` feature there is no RocksDB.
#[cfg(not(feature = "peers"))]
pub fn open_rocksdb_tuned(
    _design: &cosine_design::Design,
    _entries: u64,
    _memory: u64,
    _dir: &std::path::Path,
) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine 'rocksdb-cosine' needs the `peers` feature")
}

#[cfg(feature = "peers")]
pub fn open(engine: &str, memory: u64, dir: &std::path::Path) -> Result<Box<dyn Store>> {
    Ok(match engine {
        "rocksdb" => Box::new(peers::Rocks::open(memory, dir)?),
        "fjall" => Box::new(peers::Fjall::open(memory, dir)?),
        "redb" => Box::new(peers::Redb::open(memory, dir)?),
        "sled" => Box::new(peers::Sled::open(memory, dir)?),
        #[cfg(feature = "wiredtiger")]
        "wiredtiger" => Box::new(wt::WiredTiger::open(memory, dir, false)?),
        #[cfg(feature = "wiredtiger")]
        "wiredtiger-lsm" => Box::new(wt::WiredTiger::open(memory, dir, true)?),
        other => anyhow::bail!("unknown engine '{other}'"),
    })
}

#[cfg(feature = "peers")]
mod peers {
    use super::{proc_io, Stripes};
    use anyhow::Result;
    use cosine_ycsb::{IoCounters, Store};

    fn e<E: std::fmt::Display>(x: E) -> String {
        x.to_string()
    }

    fn merge(old: Option<Vec<u8>>, patch: &[u8]) -> Vec<u8> {
        let mut v = old.unwrap_or_else(|| patch.to_vec());
        let n = patch.len().min(v.len());
        v[..n].copy_from_slice(&patch[..n]);
        v
    }

    /// RocksDB 7.8.3 (Debian) with defaults, as Cosine Section 7 runs it, and the memory budget split between
    /// the memtable (a quarter) and the block cache; WAL on, no fsync per write; 10 bits/key Bloom filters.
    pub struct Rocks {
        db: rocksdb::DB,
        stripes: Stripes,
    }

    impl Rocks {
        /// RocksDB with Cosine's leveled design: the memtable is M_B, the level multiplier T (level 1 = T·M_B),
        /// Bloom filters get M_BF over the records, and the block cache what the budget has left after the
        /// memtable, filters and fences.
        pub fn open_tuned(
            d: &cosine_design::Design,
            entries: u64,
            memory: u64,
            dir: &std::path::Path,
        ) -> Result<Self> {
            let mut opts = rocksdb::Options::default();
            opts.create_if_missing(true);
            opts.set_write_buffer_size(d.buffer_bytes as usize);
            opts.set_max_bytes_for_level_multiplier(d.size_ratio as f64);
            opts.set_max_bytes_for_level_base(d.size_ratio * d.buffer_bytes);
            let mut table = rocksdb::BlockBasedOptions::default();
            table.set_block_size(d.block_bytes as usize);
            let cache = memory
                .saturating_sub(d.buffer_bytes + d.filter_bytes + d.fence_bytes)
                .max(1 << 20);
            table.set_block_cache(&rocksdb::Cache::new_lru_cache(cache as usize)?);
            let bits = d.filter_bytes as f64 * 8.0 / entries.max(1) as f64;
            if bits > 0.0 {
                table.set_bloom_filter(bits, false);
            }
            opts.set_block_based_table_factory(&table);
            Ok(Rocks {
                db: rocksdb::DB::open(&opts, dir)?,
                stripes: Stripes::new(),
            })
        }

        pub fn open(memory: u64, dir: &std::path::Path) -> Result<Self> {
            let mut opts = rocksdb::Options::default();
            opts.create_if_missing(true);
            opts.set_write_buffer_size((memory / 4) as usize);
            let mut table = rocksdb::BlockBasedOptions::default();
            table.set_block_cache(&rocksdb::Cache::new_lru_cache((memory * 3 / 4) as usize)?);
            table.set_bloom_filter(10.0, false);
            opts.set_block_based_table_factory(&table);
            Ok(Rocks {
                db: rocksdb::DB::open(&opts, dir)?,
                stripes: Stripes::new(),
            })
        }
    }

    impl Store for Rocks {
        fn name(&self) -> String {
            "rocksdb".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.db.put(k, v).map_err(e)
        }
        fn read(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
            self.db.get(k).map_err(e)
        }
        fn update(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.db.put(k, v).map_err(e)
        }
        fn scan(&self, start: &[u8], n: usize) -> Result<usize, String> {
            let it = self.db.iterator(rocksdb::IteratorMode::From(
                start,
                rocksdb::Direction::Forward,
            ));
            let mut c = 0;
            for item in it.take(n) {
                item.map_err(e)?;
                c += 1;
            }
            Ok(c)
        }
        fn read_modify_write(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            let _g = self.stripes.lock(k);
            let old = self.db.get(k).map_err(e)?;
            self.db.put(k, merge(old, v)).map_err(e)
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        fn settle(&self) -> Result<(), String> {
            self.db.flush().map_err(e)
        }
    }

    /// fjall 3 with its defaults and its block cache set to the memory budget; journal buffered.
    pub struct Fjall {
        db: fjall::Database,
        ks: fjall::Keyspace,
        stripes: Stripes,
    }

    impl Fjall {
        pub fn open(memory: u64, dir: &std::path::Path) -> Result<Self> {
            let db = fjall::Database::builder(dir).cache_size(memory).open()?;
            let ks = db.keyspace("ycsb", fjall::KeyspaceCreateOptions::default)?;
            Ok(Fjall {
                db,
                ks,
                stripes: Stripes::new(),
            })
        }
    }

    impl Store for Fjall {
        fn name(&self) -> String {
            "fjall".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.ks.insert(k, v).map_err(e)
        }
        fn read(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
            self.ks.get(k).map(|o| o.map(|v| v.to_vec())).map_err(e)
        }
        fn update(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.ks.insert(k, v).map_err(e)
        }
        fn scan(&self, start: &[u8], n: usize) -> Result<usize, String> {
            let mut c = 0;
            for g in self.ks.range(start.to_vec()..).take(n) {
                g.into_inner().map_err(e)?;
                c += 1;
            }
            Ok(c)
        }
        fn read_modify_write(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            let _g = self.stripes.lock(k);
            let old = self.ks.get(k).map_err(e)?.map(|x| x.to_vec());
            self.ks.insert(k, merge(old, v)).map_err(e)
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        fn settle(&self) -> Result<(), String> {
            self.db.persist(fjall::PersistMode::Buffer).map_err(e)
        }
    }

    const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("ycsb");

    /// redb 4 (a copy-on-write B-tree) with its page cache set to the memory budget; commits with
    /// `Durability::None` so that it, like the others, does not fsync every write.
    pub struct Redb {
        db: redb::Database,
    }

    impl Redb {
        pub fn open(memory: u64, dir: &std::path::Path) -> Result<Self> {
            let db = redb::Database::builder()
                .set_cache_size(memory as usize)
                .create(dir.join("db.redb"))?;
            let tx = db.begin_write()?;
            tx.open_table(TABLE)?;
            tx.commit()?;
            Ok(Redb { db })
        }

        fn write(
            &self,
            f: impl FnOnce(&mut redb::Table<&[u8], &[u8]>) -> Result<(), String>,
        ) -> Result<(), String> {
            let mut tx = self.db.begin_write().map_err(e)?;
            tx.set_durability(redb::Durability::None).map_err(e)?;
            {
                let mut t = tx.open_table(TABLE).map_err(e)?;
                f(&mut t)?;
            }
            tx.commit().map_err(e)
        }
    }

    impl Store for Redb {
        fn name(&self) -> String {
            "redb".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.write(|t| t.insert(k, v).map(|_| ()).map_err(e))
        }
        fn read(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
            use redb::ReadableDatabase;
            let tx = self.db.begin_read().map_err(e)?;
            let t = tx.open_table(TABLE).map_err(e)?;
            Ok(t.get(k).map_err(e)?.map(|v| v.value().to_vec()))
        }
        fn update(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.insert(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> Result<usize, String> {
            use redb::ReadableDatabase;
            let tx = self.db.begin_read().map_err(e)?;
            let t = tx.open_table(TABLE).map_err(e)?;
            let mut c = 0;
            for item in t.range(start..).map_err(e)?.take(n) {
                item.map_err(e)?;
                c += 1;
            }
            Ok(c)
        }
        fn read_modify_write(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            // a write transaction is exclusive: read and write inside it
            use redb::ReadableTable;
            self.write(|t| {
                let old = t.get(k).map_err(e)?.map(|x| x.value().to_vec());
                t.insert(k, merge(old, v).as_slice()).map(|_| ()).map_err(e)
            })
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        fn settle(&self) -> Result<(), String> {
            let mut tx = self.db.begin_write().map_err(e)?;
            tx.set_durability(redb::Durability::Immediate).map_err(e)?;
            tx.commit().map_err(e)
        }
    }

    /// sled 0.34 with its cache set to the memory budget and its default background flush.
    pub struct Sled {
        db: sled::Db,
        stripes: Stripes,
    }

    impl Sled {
        pub fn open(memory: u64, dir: &std::path::Path) -> Result<Self> {
            Ok(Sled {
                db: sled::Config::new()
                    .path(dir)
                    .cache_capacity(memory)
                    .open()?,
                stripes: Stripes::new(),
            })
        }
    }

    impl Store for Sled {
        fn name(&self) -> String {
            "sled".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.db.insert(k, v).map(|_| ()).map_err(e)
        }
        fn read(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
            self.db.get(k).map(|o| o.map(|v| v.to_vec())).map_err(e)
        }
        fn update(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.insert(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> Result<usize, String> {
            let mut c = 0;
            for item in self.db.range(start..).take(n) {
                item.map_err(e)?;
                c += 1;
            }
            Ok(c)
        }
        fn read_modify_write(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            let _g = self.stripes.lock(k);
            let old = self.db.get(k).map_err(e)?.map(|x| x.to_vec());
            self.db.insert(k, merge(old, v)).map(|_| ()).map_err(e)
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        fn settle(&self) -> Result<(), String> {
            self.db.flush().map(|_| ()).map_err(e)
        }
    }
}

/// WiredTiger through a thin FFI of our own to Debian's libwiredtiger 3.2.1 (the `wiredtiger` crate targets
/// WiredTiger 12). Only the leading members of WiredTiger's method tables that we call are declared, in the
/// order of `wiredtiger.h`; the structures are only ever used through pointers WiredTiger hands out.
#[cfg(feature = "wiredtiger")]
pub mod wt {
    use cosine_ycsb::{IoCounters, Store};
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
    unsafe impl Send for Handle {}

    /// WiredTiger with a B-tree (`type=file`) or LSM (`type=lsm`) table, its cache set to the memory budget,
    /// no write-ahead log (WiredTiger's default: durability by checkpoints).
    pub struct WiredTiger {
        conn: *mut Connection,
        uri: CString,
        pool: Mutex<Vec<Handle>>,
        lsm: bool,
        chunk_bytes: u64,
        stripes: super::Stripes,
    }
    unsafe impl Send for WiredTiger {}
    unsafe impl Sync for WiredTiger {}

    fn check(rc: c_int, what: &str) -> Result<(), String> {
        if rc == 0 {
            Ok(())
        } else {
            Err(format!("wiredtiger {what} failed with {rc}"))
        }
    }

    impl WiredTiger {
        pub fn open(memory: u64, dir: &std::path::Path, lsm: bool) -> anyhow::Result<Self> {
            let home = CString::new(dir.to_string_lossy().as_bytes())?;
            let config = CString::new(format!("create,cache_size={}MB", (memory >> 20).max(1)))?;
            let mut conn = null_mut();
            check(
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
                lsm,
                chunk_bytes: (memory / 4).max(512 << 10),
                stripes: super::Stripes::new(),
            };
            let h = store.handle_new(true).map_err(anyhow::Error::msg)?;
            store.pool.lock().unwrap_or_else(|p| p.into_inner()).push(h);
            Ok(store)
        }

        fn handle_new(&self, create: bool) -> Result<Handle, String> {
            unsafe {
                let mut session = null_mut();
                check(
                    ((*self.conn).open_session)(
                        self.conn,
                        null_mut(),
                        std::ptr::null(),
                        &mut session,
                    ),
                    "open_session",
                )?;
                if create {
                    let cfg = if self.lsm {
                        format!(
                            "key_format=u,value_format=u,type=lsm,lsm=(chunk_size={})",
                            self.chunk_bytes
                        )
                    } else {
                        "key_format=u,value_format=u".to_string()
                    };
                    let cfg = CString::new(cfg).map_err(|e| e.to_string())?;
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

        fn with<T>(&self, f: impl FnOnce(*mut Cursor) -> Result<T, String>) -> Result<T, String> {
            let h = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let h = match h {
                Some(h) => h,
                None => self.handle_new(false)?,
            };
            let r = f(h.cursor);
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

        fn put(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.with(|c| unsafe {
                let (key, value) = (Self::item(k), Self::item(v));
                ((*c).set_key)(c, &key as *const Item);
                ((*c).set_value)(c, &value as *const Item);
                check(((*c).insert)(c), "insert")
            })
        }

        fn value_of(c: *mut Cursor) -> Result<Vec<u8>, String> {
            unsafe {
                let mut out = Item {
                    data: std::ptr::null(),
                    size: 0,
                    mem: null_mut(),
                    memsize: 0,
                    flags: 0,
                };
                check(((*c).get_value)(c, &mut out as *mut Item), "get_value")?;
                Ok(std::slice::from_raw_parts(out.data as *const u8, out.size).to_vec())
            }
        }
    }

    impl Drop for WiredTiger {
        fn drop(&mut self) {
            let handles = std::mem::take(&mut *self.pool.lock().unwrap_or_else(|p| p.into_inner()));
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
            if self.lsm {
                "wiredtiger-lsm".into()
            } else {
                "wiredtiger".into()
            }
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.put(k, v)
        }
        fn read(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
            self.with(|c| unsafe {
                let key = Self::item(k);
                ((*c).set_key)(c, &key as *const Item);
                match ((*c).search)(c) {
                    0 => Self::value_of(c).map(Some),
                    WT_NOTFOUND => Ok(None),
                    rc => Err(format!("wiredtiger search failed with {rc}")),
                }
            })
        }
        fn update(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            self.put(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> Result<usize, String> {
            self.with(|c| unsafe {
                let key = Self::item(start);
                ((*c).set_key)(c, &key as *const Item);
                let mut exact: c_int = 0;
                match ((*c).search_near)(c, &mut exact) {
                    0 => {}
                    WT_NOTFOUND => return Ok(0),
                    rc => return Err(format!("wiredtiger search_near failed with {rc}")),
                }
                if exact < 0 && ((*c).next)(c) != 0 {
                    return Ok(0);
                }
                let mut count = 0;
                loop {
                    Self::value_of(c)?;
                    count += 1;
                    if count >= n || ((*c).next)(c) != 0 {
                        return Ok(count);
                    }
                }
            })
        }
        fn read_modify_write(&self, k: &[u8], v: &[u8]) -> Result<(), String> {
            // WiredTiger's own snapshot isolation would need transactions; the harness serialises rmws per key
            let _g = self.stripes.lock(k);
            let mut value = self.read(k)?.unwrap_or_else(|| v.to_vec());
            let n = v.len().min(value.len());
            value[..n].copy_from_slice(&v[..n]);
            self.put(k, &value)
        }
        fn io(&self) -> Option<IoCounters> {
            super::proc_io()
        }
        fn settle(&self) -> Result<(), String> {
            Ok(())
        }
    }
}

#[cfg(all(test, feature = "peers"))]
mod tests {
    use super::*;

    /// Every peer stores, reads back, scans in key order and read-modify-writes.
    #[test]
    fn every_peer_round_trips() {
        for engine in AVAILABLE.iter().copied().chain(["rocksdb-cosine"]) {
            let dir = std::env::temp_dir()
                .join(format!("cosine-peer-test-{}-{engine}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let s = if engine == "rocksdb-cosine" {
                let mut d = cosine_design::Design::rocksdb_like(1 << 20, 1 << 10, 1 << 16);
                d.size_ratio = 4;
                open_rocksdb_tuned(&d, 200, 8 << 20, &dir).unwrap()
            } else {
                open(engine, 8 << 20, &dir).unwrap()
            };
            for i in 0..200u32 {
                s.insert(
                    format!("k{i:04}").as_bytes(),
                    format!("value-{i}").as_bytes(),
                )
                .unwrap();
            }
            assert_eq!(
                s.read(b"k0042").unwrap().as_deref(),
                Some(&b"value-42"[..]),
                "{engine}"
            );
            assert_eq!(s.read(b"nope").unwrap(), None, "{engine}");
            assert_eq!(s.scan(b"k0190", 50).unwrap(), 10, "{engine}");
            s.read_modify_write(b"k0001", b"VAL").unwrap();
            assert_eq!(
                s.read(b"k0001").unwrap().as_deref(),
                Some(&b"VALue-1"[..]),
                "{engine}"
            );
            s.settle().unwrap();
            drop(s);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
