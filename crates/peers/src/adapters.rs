//! One adapter per peer engine behind `cosine_ycsb::Store`, each given the same memory budget. Engines that
//! do not count their own I/O report /proc/self/io (bytes the process read from and wrote to storage, in 4 KiB
//! units; reads served by the OS page cache do not count).

#![allow(dead_code)]

use anyhow::Result;
use cosine_ycsb::{IoCounters, Store, StoreResult};

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

/// Bytes this process has read from storage (`read_bytes` of /proc/self/io; page-cache hits do not count).
pub fn proc_io_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/io").ok()?;
    s.lines()
        .find(|l| l.starts_with("read_bytes:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Polls `idle` every `every` until it has answered true `times` times in a row (a finished compaction may
/// schedule the next), for at most 600 s: how the harness settles an engine before the timed run.
pub fn wait_until_idle(
    what: &str,
    every: std::time::Duration,
    times: u32,
    mut idle: impl FnMut() -> StoreResult<bool>,
) -> StoreResult<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let mut quiet = 0;
    while quiet < times {
        if std::time::Instant::now() > deadline {
            return Err(format!("{what}: background work still running after 600 s").into());
        }
        std::thread::sleep(every);
        quiet = if idle()? { quiet + 1 } else { 0 };
    }
    Ok(())
}

/// Waits until this process has written less than 64 KiB to storage in each of two consecutive half-second
/// windows: how the harness settles an engine that has no API reporting pending work.
pub fn quiet_wait() -> StoreResult<()> {
    let written = || proc_io().map_or(0, |c| c.background);
    let mut last = written();
    wait_until_idle("writes", std::time::Duration::from_millis(500), 2, || {
        let now = written();
        // /proc/self/io counts 4 KiB units here
        let quiet = now.saturating_sub(last) < 16;
        last = now;
        Ok(quiet)
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
pub fn open(
    engine: &str,
    _memory: u64,
    _dir: &std::path::Path,
    _durable: bool,
) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine '{engine}' needs the `peers` feature")
}

/// RocksDB configured with a leveled LSM design Cosine chose (the "RocksDB with Cosine's parameters" row).
#[cfg(feature = "peers")]
pub fn open_rocksdb_tuned(
    design: &cosine_design::Design,
    entries: u64,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<Box<dyn Store>> {
    Ok(Box::new(peers::Rocks::open_tuned(
        design, entries, memory, dir, durable,
    )?))
}

/// Without the `peers` feature there is no RocksDB.
#[cfg(not(feature = "peers"))]
pub fn open_rocksdb_tuned(
    _design: &cosine_design::Design,
    _entries: u64,
    _memory: u64,
    _dir: &std::path::Path,
    _durable: bool,
) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine 'rocksdb-cosine' needs the `peers` feature")
}

/// Opens a peer engine with `memory` bytes for its caches and buffers; `durable`: every write fsynced before
/// it is acknowledged, else every write handed to the OS without fsync (where the engine can; see each
/// adapter).
#[cfg(feature = "peers")]
pub fn open(
    engine: &str,
    memory: u64,
    dir: &std::path::Path,
    durable: bool,
) -> Result<Box<dyn Store>> {
    Ok(match engine {
        "rocksdb" => Box::new(peers::Rocks::open(memory, dir, durable)?),
        "fjall" => Box::new(peers::Fjall::open(memory, dir, durable)?),
        "redb" => Box::new(peers::Redb::open(memory, dir, durable)?),
        "sled" => Box::new(peers::Sled::open(memory, dir, durable)?),
        #[cfg(feature = "wiredtiger")]
        "wiredtiger" => Box::new(wt::WiredTiger::open(memory, dir, false, durable)?),
        #[cfg(feature = "wiredtiger")]
        "wiredtiger-lsm" => Box::new(wt::WiredTiger::open(memory, dir, true, durable)?),
        other => anyhow::bail!("unknown engine '{other}'"),
    })
}

#[cfg(feature = "peers")]
mod peers {
    use super::{proc_io, quiet_wait, wait_until_idle, Stripes};
    use anyhow::Result;
    use cosine_ycsb::{IoCounters, Store, StoreError, StoreResult};

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;
    type Modify<'a> = &'a mut dyn FnMut(Option<&[u8]>) -> Vec<u8>;

    fn e<E: std::fmt::Display>(x: E) -> StoreError {
        StoreError::Peer(x.to_string())
    }

    /// RocksDB 7.8.3 (Debian), split as its tuning guide suggests for a memory budget M: memtables capped at
    /// M/4 in all (`db_write_buffer_size`; two of M/8), a block cache of 3M/4 that also holds the index and
    /// filter blocks (`cache_index_and_filter_blocks`, level-0's pinned), 10 bits/key Bloom filters, no
    /// compression. Every write goes to the WAL and so to the OS; `durable` fsyncs it (`WriteOptions::sync`,
    /// which RocksDB group-commits).
    pub struct Rocks {
        db: rocksdb::DB,
        stripes: Stripes,
        write: rocksdb::WriteOptions,
    }

    fn rocks_options(
        memtable: u64,
        cache: u64,
        bits: f64,
        block: usize,
    ) -> Result<rocksdb::Options> {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(rocksdb::DBCompressionType::None);
        opts.set_bottommost_compression_type(rocksdb::DBCompressionType::None);
        opts.set_write_buffer_size(memtable as usize);
        opts.set_max_write_buffer_number(2);
        opts.set_db_write_buffer_size(2 * memtable as usize);
        let mut table = rocksdb::BlockBasedOptions::default();
        table.set_block_size(block);
        table.set_block_cache(&rocksdb::Cache::new_lru_cache(cache as usize)?);
        table.set_cache_index_and_filter_blocks(true);
        table.set_pin_l0_filter_and_index_blocks_in_cache(true);
        if bits > 0.0 {
            table.set_bloom_filter(bits, false);
        }
        opts.set_block_based_table_factory(&table);
        Ok(opts)
    }

    impl Rocks {
        /// RocksDB with Cosine's leveled design: memtables of M_B/2 (two share M_B, as in our engine), the
        /// level multiplier T (level 1 = T·M_B/2), Bloom filters with M_BF's bits per key, and a block cache
        /// of what the budget has left after the memtables (index and filter blocks live in it).
        pub fn open_tuned(
            d: &cosine_design::Design,
            entries: u64,
            memory: u64,
            dir: &std::path::Path,
            durable: bool,
        ) -> Result<Self> {
            let memtable = d.flush_bytes().max(1 << 20);
            let cache = memory.saturating_sub(2 * memtable).max(1 << 20);
            let bits = d.filter_bytes as f64 * 8.0 / entries.max(1) as f64;
            let mut opts = rocks_options(memtable, cache, bits, d.block_bytes as usize)?;
            opts.set_max_bytes_for_level_multiplier(d.size_ratio as f64);
            opts.set_max_bytes_for_level_base(d.size_ratio * memtable);
            Self::with(opts, dir, durable)
        }

        pub fn open(memory: u64, dir: &std::path::Path, durable: bool) -> Result<Self> {
            let opts = rocks_options(memory / 8, memory * 3 / 4, 10.0, 4096)?;
            Self::with(opts, dir, durable)
        }

        fn with(opts: rocksdb::Options, dir: &std::path::Path, durable: bool) -> Result<Self> {
            let mut write = rocksdb::WriteOptions::default();
            write.set_sync(durable);
            Ok(Rocks {
                db: rocksdb::DB::open(&opts, dir)?,
                stripes: Stripes::new(),
                write,
            })
        }

        fn pending(&self) -> StoreResult<u64> {
            let p = |name: &str| -> StoreResult<u64> {
                Ok(self.db.property_int_value(name).map_err(e)?.unwrap_or(0))
            };
            Ok(p("rocksdb.compaction-pending")?
                + p("rocksdb.num-running-compactions")?
                + p("rocksdb.num-running-flushes")?
                + p("rocksdb.mem-table-flush-pending")?)
        }
    }

    impl Store for Rocks {
        fn name(&self) -> String {
            "rocksdb".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.db.put_opt(k, v, &self.write).map_err(e)
        }
        fn read(&self, k: &[u8]) -> StoreResult<Option<Vec<u8>>> {
            self.db.get(k).map_err(e)
        }
        fn update(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.insert(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> StoreResult<Entries> {
            let it = self.db.iterator(rocksdb::IteratorMode::From(
                start,
                rocksdb::Direction::Forward,
            ));
            let mut out = Vec::with_capacity(n.min(1024));
            for item in it.take(n) {
                let (k, v) = item.map_err(e)?;
                out.push((k.to_vec(), v.to_vec()));
            }
            Ok(out)
        }
        fn read_modify_write(&self, k: &[u8], f: Modify<'_>) -> StoreResult<()> {
            let _g = self.stripes.lock(k);
            let old = self.db.get(k).map_err(e)?;
            self.insert(k, &f(old.as_deref()))
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        /// Flushes the memtable, then waits until RocksDB reports no pending or running flush or compaction.
        fn settle(&self) -> StoreResult<()> {
            self.db.flush().map_err(e)?;
            wait_until_idle("rocksdb", std::time::Duration::from_millis(50), 1, || {
                Ok(self.pending()? == 0)
            })
        }
    }

    /// fjall 3: a block cache of 3M/4, memtables of M/8 (the active one and those awaiting their flush),
    /// no compression; each write flushed to the OS from its journal buffer (fjall's default); `durable`
    /// persists the journal with fdatasync after every write.
    pub struct Fjall {
        db: fjall::Database,
        ks: fjall::Keyspace,
        stripes: Stripes,
        durable: bool,
    }

    impl Fjall {
        pub fn open(memory: u64, dir: &std::path::Path, durable: bool) -> Result<Self> {
            use fjall::config::CompressionPolicy;
            let db = fjall::Database::builder(dir)
                .cache_size(memory * 3 / 4)
                .open()?;
            let ks = db.keyspace("ycsb", || {
                fjall::KeyspaceCreateOptions::default()
                    .max_memtable_size(memory / 8)
                    .data_block_compression_policy(CompressionPolicy::all(
                        fjall::CompressionType::None,
                    ))
                    .index_block_compression_policy(CompressionPolicy::all(
                        fjall::CompressionType::None,
                    ))
            })?;
            Ok(Fjall {
                db,
                ks,
                stripes: Stripes::new(),
                durable,
            })
        }

        fn put(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.ks.insert(k, v).map_err(e)?;
            if self.durable {
                self.db.persist(fjall::PersistMode::SyncData).map_err(e)?;
            }
            Ok(())
        }
    }

    impl Store for Fjall {
        fn name(&self) -> String {
            "fjall".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.put(k, v)
        }
        fn read(&self, k: &[u8]) -> StoreResult<Option<Vec<u8>>> {
            self.ks.get(k).map(|o| o.map(|v| v.to_vec())).map_err(e)
        }
        fn update(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.put(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> StoreResult<Entries> {
            let mut out = Vec::with_capacity(n.min(1024));
            for g in self.ks.range(start.to_vec()..).take(n) {
                let (k, v) = g.into_inner().map_err(e)?;
                out.push((k.to_vec(), v.to_vec()));
            }
            Ok(out)
        }
        fn read_modify_write(&self, k: &[u8], f: Modify<'_>) -> StoreResult<()> {
            let _g = self.stripes.lock(k);
            let old = self.ks.get(k).map_err(e)?;
            self.put(k, &f(old.as_deref()))
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        /// Flushes the memtable and waits for it, then until fjall reports no outstanding flush and no
        /// running compaction, twice in a row a quarter of a second apart (a finished compaction may
        /// schedule the next).
        fn settle(&self) -> StoreResult<()> {
            self.db.persist(fjall::PersistMode::SyncAll).map_err(e)?;
            self.ks.rotate_memtable_and_wait().map_err(e)?;
            wait_until_idle("fjall", std::time::Duration::from_millis(250), 2, || {
                Ok(self.db.outstanding_flushes() == 0 && self.db.active_compactions() == 0)
            })
        }
    }

    const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("ycsb");

    /// redb 4 (a copy-on-write B-tree) with its page cache set to the memory budget. redb has no mode that
    /// hands a commit to the OS without fsyncing it: commits use `Durability::None` (held in redb's memory
    /// until a durable commit; a process kill may lose them: a weaker promise than the others', stated in
    /// the table), and `durable` commits with `Durability::Immediate` (fsync per commit). No compression.
    pub struct Redb {
        db: redb::Database,
        durability: redb::Durability,
    }

    impl Redb {
        pub fn open(memory: u64, dir: &std::path::Path, durable: bool) -> Result<Self> {
            let db = redb::Database::builder()
                .set_cache_size(memory as usize)
                .create(dir.join("db.redb"))?;
            let tx = db.begin_write()?;
            tx.open_table(TABLE)?;
            tx.commit()?;
            Ok(Redb {
                db,
                durability: if durable {
                    redb::Durability::Immediate
                } else {
                    redb::Durability::None
                },
            })
        }

        fn write(
            &self,
            f: impl FnOnce(&mut redb::Table<&[u8], &[u8]>) -> StoreResult<()>,
        ) -> StoreResult<()> {
            let mut tx = self.db.begin_write().map_err(e)?;
            tx.set_durability(self.durability).map_err(e)?;
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
        fn insert(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.write(|t| t.insert(k, v).map(|_| ()).map_err(e))
        }
        fn read(&self, k: &[u8]) -> StoreResult<Option<Vec<u8>>> {
            use redb::ReadableDatabase;
            let tx = self.db.begin_read().map_err(e)?;
            let t = tx.open_table(TABLE).map_err(e)?;
            Ok(t.get(k).map_err(e)?.map(|v| v.value().to_vec()))
        }
        fn update(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.insert(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> StoreResult<Entries> {
            use redb::ReadableDatabase;
            let tx = self.db.begin_read().map_err(e)?;
            let t = tx.open_table(TABLE).map_err(e)?;
            let mut out = Vec::with_capacity(n.min(1024));
            for item in t.range(start..).map_err(e)?.take(n) {
                let (k, v) = item.map_err(e)?;
                out.push((k.value().to_vec(), v.value().to_vec()));
            }
            Ok(out)
        }
        fn read_modify_write(&self, k: &[u8], f: Modify<'_>) -> StoreResult<()> {
            // a write transaction is exclusive: read and write inside it
            use redb::ReadableTable;
            self.write(|t| {
                let old = t.get(k).map_err(e)?.map(|x| x.value().to_vec());
                t.insert(k, f(old.as_deref()).as_slice())
                    .map(|_| ())
                    .map_err(e)
            })
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        /// A durable commit: redb has no background work to wait for.
        fn settle(&self) -> StoreResult<()> {
            let mut tx = self.db.begin_write().map_err(e)?;
            tx.set_durability(redb::Durability::Immediate).map_err(e)?;
            tx.commit().map_err(e)
        }
    }

    /// sled 0.34 with its cache set to the memory budget. sled buffers writes in its own log buffers and
    /// writes them out every 500 ms (its default `flush_every_ms`), so a process kill may lose the last
    /// half second (a weaker promise than the others', stated in the table); `durable` flushes (fsync) after
    /// every write. sled does not compress by default.
    pub struct Sled {
        db: sled::Db,
        stripes: Stripes,
        durable: bool,
    }

    impl Sled {
        pub fn open(memory: u64, dir: &std::path::Path, durable: bool) -> Result<Self> {
            Ok(Sled {
                db: sled::Config::new()
                    .path(dir)
                    .cache_capacity(memory)
                    .open()?,
                stripes: Stripes::new(),
                durable,
            })
        }

        fn put(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.db.insert(k, v).map_err(e)?;
            if self.durable {
                self.db.flush().map_err(e)?;
            }
            Ok(())
        }
    }

    impl Store for Sled {
        fn name(&self) -> String {
            "sled".into()
        }
        fn insert(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.put(k, v)
        }
        fn read(&self, k: &[u8]) -> StoreResult<Option<Vec<u8>>> {
            self.db.get(k).map(|o| o.map(|v| v.to_vec())).map_err(e)
        }
        fn update(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.put(k, v)
        }
        fn scan(&self, start: &[u8], n: usize) -> StoreResult<Entries> {
            let mut out = Vec::with_capacity(n.min(1024));
            for item in self.db.range(start..).take(n) {
                let (k, v) = item.map_err(e)?;
                out.push((k.to_vec(), v.to_vec()));
            }
            Ok(out)
        }
        fn read_modify_write(&self, k: &[u8], f: Modify<'_>) -> StoreResult<()> {
            let _g = self.stripes.lock(k);
            let old = self.db.get(k).map_err(e)?;
            self.put(k, &f(old.as_deref()))
        }
        fn io(&self) -> Option<IoCounters> {
            proc_io()
        }
        /// Flushes, then waits until the process has written nothing for a second (sled has no API that
        /// reports pending background work).
        fn settle(&self) -> StoreResult<()> {
            self.db.flush().map(|_| ()).map_err(e)?;
            quiet_wait()
        }
    }
}

/// WiredTiger through a thin FFI of our own to Debian's libwiredtiger 3.2.1 (the `wiredtiger` crate targets
/// WiredTiger 12). Only the leading members of WiredTiger's method tables that we call are declared, in the
/// order of `wiredtiger.h`; the structures are only ever used through pointers WiredTiger hands out.
#[cfg(feature = "wiredtiger")]
pub mod wt {
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
            lsm: bool,
            durable: bool,
        ) -> anyhow::Result<Self> {
            let home = CString::new(dir.to_string_lossy().as_bytes())?;
            // the write-ahead log on, each commit written to the OS (`method=none`) or fsynced; no
            // compression (WiredTiger's default block_compressor is none)
            let config = CString::new(format!(
                "create,cache_size={}MB,log=(enabled=true),transaction_sync=(enabled=true,method={})",
                (memory >> 20).max(1),
                if durable { "fsync" } else { "none" }
            ))?;
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

        fn handle_new(&self, create: bool) -> StoreResult<Handle> {
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

        fn with<T>(&self, f: impl FnOnce(*mut Cursor) -> StoreResult<T>) -> StoreResult<T> {
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

        fn put(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
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
            Self::item_of(c, unsafe { (*c).get_key }, "get_key")
        }

        fn value_of(c: *mut Cursor) -> StoreResult<Vec<u8>> {
            Self::item_of(c, unsafe { (*c).get_value }, "get_value")
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
        fn insert(&self, k: &[u8], v: &[u8]) -> StoreResult<()> {
            self.put(k, v)
        }
        fn read(&self, k: &[u8]) -> StoreResult<Option<Vec<u8>>> {
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
            let _g = self.stripes.lock(k);
            let old = self.read(k)?;
            self.put(k, &f(old.as_deref()))
        }
        fn io(&self) -> Option<IoCounters> {
            super::proc_io()
        }
        /// Waits until the process has written nothing for a second (LSM merges and eviction run in
        /// WiredTiger's own threads; our thin FFI has no call that reports them).
        fn settle(&self) -> StoreResult<()> {
            super::quiet_wait()
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
                open_rocksdb_tuned(&d, 200, 8 << 20, &dir, false).unwrap()
            } else {
                open(engine, 8 << 20, &dir, false).unwrap()
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
            let tail = s.scan(b"k0190", 50).unwrap();
            assert_eq!(tail.len(), 10, "{engine}");
            assert_eq!(
                tail[0],
                (b"k0190".to_vec(), b"value-190".to_vec()),
                "{engine}"
            );
            assert!(tail.windows(2).all(|w| w[0].0 < w[1].0), "{engine}");
            s.read_modify_write(b"k0001", &mut |old| {
                let mut v = old.unwrap_or_default().to_vec();
                v[..3].copy_from_slice(b"VAL");
                v
            })
            .unwrap();
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
