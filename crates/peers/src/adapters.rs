//! One adapter per peer engine behind `cosine_ycsb::Store`, each given the same memory budget. Engines that
//! do not count their own I/O report /proc/self/io (bytes the process read from and wrote to storage, in 4 KiB
//! units; reads served by the OS page cache do not count).

#![allow(dead_code)]

use anyhow::Result;
use cosine_ycsb::{IoCounters, Store, StoreResult};

/// Peer engines compiled into this build.
pub const AVAILABLE: &[&str] = if cfg!(all(feature = "wiredtiger", feature = "faster")) {
    &[
        "rocksdb",
        "fjall",
        "redb",
        "sled",
        "wiredtiger",
        "wiredtiger-32k",
        "wiredtiger-lsm",
        "faster",
    ]
} else if cfg!(feature = "wiredtiger") {
    &[
        "rocksdb",
        "fjall",
        "redb",
        "sled",
        "wiredtiger",
        "wiredtiger-32k",
        "wiredtiger-lsm",
    ]
} else if cfg!(feature = "faster") {
    &["rocksdb", "fjall", "redb", "sled", "faster"]
} else if cfg!(feature = "peers") {
    &["rocksdb", "fjall", "redb", "sled"]
} else {
    &[]
};

/// Whether an engine can run a workload: FASTER has no ordered scan, so no YCSB-E. The reason when not.
pub fn unsupported(engine: &str, scans: bool) -> Option<&'static str> {
    (engine == "faster" && scans).then_some("not supported: FASTER has no ordered scan")
}

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

/// The counters of the block device a directory lives on (`/sys/dev/block/MAJOR:MINOR/stat`): requests
/// completed (after the I/O scheduler merged neighbours), the sectors they moved and the milliseconds they
/// took, reads and writes. Device-wide: every process's I/O counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceStats {
    /// Read requests completed.
    pub reads: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Milliseconds read requests took (summed over requests, so overlapping ones count each).
    pub read_ms: u64,
    /// Write requests completed.
    pub writes: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
    /// Milliseconds write requests took.
    pub write_ms: u64,
}

impl DeviceStats {
    /// The counters of the device `dir` is on; `None` for a file system without one (tmpfs, overlay) or off
    /// Linux.
    pub fn of(dir: &std::path::Path) -> Option<DeviceStats> {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(dir).ok()?.dev();
        // glibc's major()/minor() split of a dev_t
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
        Self::parse(&std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/stat")).ok()?)
    }

    /// The fields of a block device's `stat` file: reads completed (1st), sectors read (3rd), read ms (4th),
    /// writes completed (5th), sectors written (7th), write ms (8th).
    fn parse(stat: &str) -> Option<DeviceStats> {
        let f: Vec<u64> = stat
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        Some(DeviceStats {
            reads: *f.first()?,
            read_sectors: *f.get(2)?,
            read_ms: *f.get(3)?,
            writes: *f.get(4)?,
            write_sectors: *f.get(6)?,
            write_ms: *f.get(7)?,
        })
    }

    /// What the device did between `self` (earlier) and `later`, per one of `ops` operations: read and write
    /// requests and KiB per operation and the mean time of one request (µs; null without requests).
    pub fn since(&self, later: &DeviceStats, ops: u64) -> serde_json::Value {
        let (reads, writes) = (
            later.reads.saturating_sub(self.reads),
            later.writes.saturating_sub(self.writes),
        );
        let each = |ms: u64, n: u64| (n > 0).then(|| ms as f64 * 1000.0 / n as f64);
        let per_op = |n: u64| n as f64 / ops.max(1) as f64;
        let kib = |sectors: u64| per_op(sectors) / 2.0;
        serde_json::json!({
            "reads_per_op": per_op(reads),
            "read_kib_per_op": kib(later.read_sectors.saturating_sub(self.read_sectors)),
            "read_us_each": each(later.read_ms.saturating_sub(self.read_ms), reads),
            "writes_per_op": per_op(writes),
            "write_kib_per_op": kib(later.write_sectors.saturating_sub(self.write_sectors)),
            "write_us_each": each(later.write_ms.saturating_sub(self.write_ms), writes),
        })
    }
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
    /// A read-modify-write of `key` made atomic by its stripe's lock: `read` the old value, `write` what `f`
    /// makes of it (how every peer without one of its own does it).
    fn modify<V: AsRef<[u8]>>(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
        read: impl FnOnce() -> StoreResult<Option<V>>,
        write: impl FnOnce(&[u8]) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let _g = self.lock(key);
        let old = read()?;
        write(&f(old.as_ref().map(AsRef::as_ref)))
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
    #[cfg(feature = "wiredtiger")]
    if let Some(table) = wt::Table::named(engine) {
        return Ok(Box::new(wt::WiredTiger::open(memory, dir, table, durable)?));
    }
    Ok(match engine {
        "rocksdb" => Box::new(peers::Rocks::open(memory, dir, durable)?),
        "fjall" => Box::new(peers::Fjall::open(memory, dir, durable)?),
        "redb" => Box::new(peers::Redb::open(memory, dir, durable)?),
        "sled" => Box::new(peers::Sled::open(memory, dir, durable)?),
        #[cfg(feature = "faster")]
        "faster" => Box::new(fast::Faster::open(memory, dir, durable)?),
        other => anyhow::bail!("unknown engine '{other}'"),
    })
}

#[cfg(feature = "peers")]
pub(crate) mod peers {
    use super::{proc_io, quiet_wait, wait_until_idle, Stripes};
    use anyhow::Result;
    use cosine_ycsb::{IoCounters, Store, StoreError, StoreResult};

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;
    type Modify<'a> = &'a mut dyn FnMut(Option<&[u8]>) -> Vec<u8>;

    fn e<E: std::fmt::Display>(x: E) -> StoreError {
        StoreError::Peer(x.to_string())
    }

    /// How long a settle that finds RocksDB idle with only a pending-compaction flag waits before it gives up:
    /// RocksDB schedules a compaction it can run at once, so a second without any flush or compaction
    /// running means none will.
    pub const STUCK_PENDING_QUIET: std::time::Duration = std::time::Duration::from_secs(1);

    /// What [`Rocks::settle_within`] found.
    #[derive(Clone, Copy, Debug)]
    pub struct Settled {
        /// RocksDB reported no pending or running flush or compaction.
        pub settled: bool,
        /// From the start of the settle to the end of RocksDB's last flush or compaction in it.
        pub working: std::time::Duration,
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
        opts: rocksdb::Options,
        /// The write-stall triggers its options set (RocksDB's defaults unless the caller sets others): what
        /// [`Rocks::settle_within`] must not flush into.
        pub stall: StallTrigger,
        /// The bytes (key and value) of an entry its last scan returned, on average (0 before the first): what
        /// a scan of n entries asks RocksDB to read ahead.
        scan_entry_bytes: std::sync::atomic::AtomicU64,
    }

    /// When RocksDB stops or slows writes: its memtable limit and level-0 triggers, level 0 counted in files
    /// (level style) or sorted runs (universal style). The default is RocksDB's own, with the two memtables
    /// the peer benchmark's options set.
    #[derive(Clone, Copy, Debug)]
    pub struct StallTrigger {
        /// `level0_slowdown_writes_trigger`.
        pub slowdown: u64,
        /// Universal compaction: every non-empty level counts as a sorted run beside level 0's files.
        pub universal: bool,
        /// `max_write_buffer_number`: unflushed memtables stall writes at it (and above 3, one before it).
        pub memtables: u64,
        /// `min_write_buffer_number_to_merge`.
        pub merge: u64,
        /// `level0_file_num_compaction_trigger`.
        pub compaction: u64,
        /// `level0_stop_writes_trigger`.
        pub stop: u64,
    }

    impl Default for StallTrigger {
        fn default() -> Self {
            StallTrigger {
                slowdown: 20,
                universal: false,
                memtables: 2,
                merge: 1,
                compaction: 4,
                stop: 36,
            }
        }
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

    /// The most Bloom-filter bits a key `rocksdb-cosine` is given. RocksDB keeps filter blocks in its block
    /// cache (`cache_index_and_filter_blocks`), so filter memory past what still lowers the false-positive rate
    /// (about 1e-4 at 20 bits) takes the data blocks' room: the search's leveled design for YCSB-C at 32 MiB
    /// over 600,000 records puts 26.5 MB into filters, 354 bits a key, and RocksDB so configured ran C at
    /// 0.38x its defaults with 179 us of client CPU an operation.
    const MAX_FILTER_BITS: f64 = 20.0;

    impl Rocks {
        /// RocksDB with Cosine's leveled design: memtables of M_B/2 (two share M_B, as in our engine), the
        /// level multiplier T (level 1 = T·M_B/2), Bloom filters with M_BF's bits per key, and a block cache
        /// of what the budget has left after the memtables (index and filter blocks live in it; the bits a key
        /// at most [`MAX_FILTER_BITS`]); the split is
        /// `cosine_learn::knobs::rocksdb_memory_split`'s, which keeps both within `memory`.
        pub fn open_tuned(
            d: &cosine_design::Design,
            entries: u64,
            memory: u64,
            dir: &std::path::Path,
            durable: bool,
        ) -> Result<Self> {
            let (memtable, cache) =
                cosine_learn::knobs::rocksdb_memory_split(d.flush_bytes(), memory);
            let bits = (d.filter_bytes as f64 * 8.0 / entries.max(1) as f64).min(MAX_FILTER_BITS);
            let mut opts = rocks_options(memtable, cache, bits, d.block_bytes as usize)?;
            opts.set_max_bytes_for_level_multiplier(d.size_ratio as f64);
            opts.set_max_bytes_for_level_base(d.size_ratio * memtable);
            Self::with(opts, dir, durable)
        }

        /// RocksDB as its tuning guide sets up a leveled tree for `memory`: two memtables of M/8, a block cache
        /// of 3M/4 holding the index and filter blocks, 10-bit Bloom filters, 4 KiB blocks; level 1 the size of
        /// level 0 at its compaction trigger (`max_bytes_for_level_base` = memtable × 4), files a tenth of it
        /// (`target_file_size_base`), and level sizes worked out from the last level up
        /// (`level_compaction_dynamic_level_bytes`, the default from RocksDB 8.4; Debian's 7.8 defaults to
        /// off). RocksDB's own defaults (a 256 MiB level 1 of 64 MiB files) are sized for 64 MiB memtables:
        /// with 4 MiB ones every level-0 compaction rewrote a large share of level 1.
        pub fn open(memory: u64, dir: &std::path::Path, durable: bool) -> Result<Self> {
            let memtable = memory / 8;
            let mut opts = rocks_options(memtable, memory * 3 / 4, 10.0, 4096)?;
            let level_base = memtable * StallTrigger::default().compaction;
            opts.set_max_bytes_for_level_base(level_base);
            opts.set_target_file_size_base((level_base / 10).max(1 << 20));
            opts.set_level_compaction_dynamic_level_bytes(true);
            Self::with(opts, dir, durable)
        }

        /// RocksDB opened with these options in `dir`.
        pub fn with(opts: rocksdb::Options, dir: &std::path::Path, durable: bool) -> Result<Self> {
            let mut write = rocksdb::WriteOptions::default();
            write.set_sync(durable);
            Ok(Rocks {
                db: rocksdb::DB::open(&opts, dir)?,
                stripes: Stripes::new(),
                write,
                opts,
                stall: StallTrigger::default(),
                scan_entry_bytes: std::sync::atomic::AtomicU64::new(0),
            })
        }

        /// RocksDB's statistics dump (tickers and histograms), when the options enabled statistics.
        pub fn statistics(&self) -> Option<String> {
            self.opts.get_statistics()
        }

        /// An integer property of the database (`rocksdb.total-sst-files-size`, ...).
        pub fn property(&self, name: &str) -> Option<u64> {
            self.db.property_int_value(name).ok().flatten()
        }

        /// Flushes the memtables, then waits up to `limit` for RocksDB to report no pending or running flush
        /// or compaction. Some configurations keep a compaction pending without ever running it (universal
        /// compaction waiting on a trigger it cannot reach): when only that flag is left and nothing has run
        /// for [`STUCK_PENDING_QUIET`], the wait ends there, unsettled, instead of at `limit`. RocksDB holds a
        /// manual flush back until it would not stall writes, forever where no compaction will ever thin level
        /// 0: the flush waits until it would not reach the stall trigger, and is left out (unsettled) when
        /// background work has stopped short of that. The result says whether RocksDB settled and how long it
        /// worked: up to the end of its last flush or compaction, the quiet tail of a stuck wait left out.
        pub fn settle_within(&self, limit: std::time::Duration) -> StoreResult<Settled> {
            let started = std::time::Instant::now();
            let deadline = started + limit;
            let mut flushed = false;
            let mut last_busy = started;
            loop {
                // only while nothing runs: a flush finishing between the test and our flush could add the
                // level-0 file that makes RocksDB wait
                if !flushed && self.busy()? == 0 && !self.flush_would_stall()? {
                    self.db.flush().map_err(e)?;
                    flushed = true;
                    last_busy = std::time::Instant::now();
                }
                let now = std::time::Instant::now();
                let busy = self.busy()?;
                if busy > 0 {
                    last_busy = now;
                }
                if flushed && busy == 0 && self.pending()? == 0 {
                    return Ok(Settled {
                        settled: true,
                        working: now - started,
                    });
                }
                if now > deadline || (busy == 0 && now - last_busy >= STUCK_PENDING_QUIET) {
                    return Ok(Settled {
                        settled: false,
                        working: if busy == 0 {
                            last_busy - started
                        } else {
                            now - started
                        },
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }

        /// Whether a manual flush now would wait for RocksDB's write-stall condition to clear, as RocksDB 7.8
        /// decides it (`WaitUntilFlushWouldNotStallWrites`): not while fewer memtables than
        /// `min_write_buffer_number_to_merge` are unflushed and level 0 holds fewer files (sorted runs under
        /// universal compaction) than its compaction trigger; otherwise when one more unflushed memtable and
        /// one more level-0 file would stop writes (the memtable limit, the stop trigger) or delay them (one
        /// memtable before the limit above 3 memtables, with more than the merge count unflushed; the
        /// slowdown trigger).
        fn flush_would_stall(&self) -> StoreResult<bool> {
            let p = |name: &str| self.int_property(name);
            let mut runs = p("rocksdb.num-files-at-level0")?;
            if self.stall.universal {
                // (levels past the configured `num_levels` report no files; the knob space's widest is 8)
                for level in 1..16 {
                    runs += u64::from(p(&format!("rocksdb.num-files-at-level{level}"))? > 0);
                }
            }
            let imm = p("rocksdb.num-immutable-mem-table")?;
            let t = &self.stall;
            if imm < t.merge && runs < t.compaction {
                return Ok(false);
            }
            let (unflushed, files) = (imm + 1, runs + 1);
            let stop = unflushed >= t.memtables || files >= t.stop;
            let delay = (t.memtables > 3 && unflushed + 1 >= t.memtables && unflushed > t.merge)
                || files >= t.slowdown;
            Ok(stop || delay)
        }

        /// An integer property (0 where RocksDB reports none), its error a store error.
        fn int_property(&self, name: &str) -> StoreResult<u64> {
            Ok(self.db.property_int_value(name).map_err(e)?.unwrap_or(0))
        }

        /// Flushes and compactions running or waiting for a flush (what a settle waits for while it runs).
        fn busy(&self) -> StoreResult<u64> {
            let p = |name: &str| self.int_property(name);
            Ok(p("rocksdb.num-running-compactions")?
                + p("rocksdb.num-running-flushes")?
                + p("rocksdb.mem-table-flush-pending")?)
        }

        fn pending(&self) -> StoreResult<u64> {
            let p = |name: &str| self.int_property(name);
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
        /// The scan's length known, as our engine's scans know it: RocksDB is asked to read ahead the bytes
        /// n entries take (`readahead_size`, read in one request at the scan's first block) instead of its
        /// automatic readahead, which starts at 8 KiB from the third read and doubles.
        fn scan(&self, start: &[u8], n: usize) -> StoreResult<Entries> {
            use std::sync::atomic::Ordering::Relaxed;
            let mut read = rocksdb::ReadOptions::default();
            let entry = self.scan_entry_bytes.load(Relaxed);
            if entry > 0 && n > 1 {
                // (at most what our engine's scans read ahead in one file)
                read.set_readahead_size(
                    (n as u64 * entry).min(cosine_engine::SCAN_READAHEAD_MAX) as usize
                );
            }
            let it = self.db.iterator_opt(
                rocksdb::IteratorMode::From(start, rocksdb::Direction::Forward),
                read,
            );
            let mut out = Vec::with_capacity(n.min(1024));
            let mut bytes = 0;
            for item in it.take(n) {
                let (k, v) = item.map_err(e)?;
                bytes += k.len() + v.len();
                out.push((k.to_vec(), v.to_vec()));
            }
            if !out.is_empty() {
                self.scan_entry_bytes
                    .store((bytes / out.len()) as u64, Relaxed);
            }
            Ok(out)
        }
        fn read_modify_write(&self, k: &[u8], f: Modify<'_>) -> StoreResult<()> {
            self.stripes
                .modify(k, f, || self.db.get(k).map_err(e), |v| self.insert(k, v))
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

    /// fjall 3: a block cache of 3M/4, memtables of M/8 (fjall stalls writes at four sealed memtables
    /// awaiting their flush: M/2 at most; its `max_write_buffer_size` is accepted but unused in 3.1.13), no
    /// compression; each write flushed to the OS from its journal buffer (fjall's default); `durable`
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
            self.stripes
                .modify(k, f, || self.ks.get(k).map_err(e), |v| self.put(k, v))
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
            self.stripes
                .modify(k, f, || self.db.get(k).map_err(e), |v| self.put(k, v))
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
    /// its write-ahead log on (each commit handed to the OS, or fsynced with `durable`), no compression; the
    /// B-tree's files mapped for reads (WiredTiger's default), the LSM table's not.
    pub struct WiredTiger {
        conn: *mut Connection,
        uri: CString,
        pool: Mutex<Vec<Handle>>,
        table: Table,
        chunk_bytes: u64,
        stripes: super::Stripes,
    }
    unsafe impl Send for WiredTiger {}
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
                stripes: super::Stripes::new(),
            };
            let h = store.handle_new(true).map_err(anyhow::Error::msg)?;
            store.pool.lock().unwrap_or_else(|p| p.into_inner()).push(h);
            Ok(store)
        }

        /// Opens a session on the connection (the caller closes it, or its handle keeps it).
        fn session_new(&self) -> StoreResult<*mut Session> {
            let mut session = null_mut();
            check(
                unsafe {
                    ((*self.conn).open_session)(
                        self.conn,
                        null_mut(),
                        std::ptr::null(),
                        &mut session,
                    )
                },
                "open_session",
            )?;
            Ok(session)
        }

        fn handle_new(&self, create: bool) -> StoreResult<Handle> {
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
            self.table.engine().into()
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
            self.stripes
                .modify(k, f, || self.read(k), |v| self.put(k, v))
        }
        fn io(&self) -> Option<IoCounters> {
            super::proc_io()
        }
        /// Takes a checkpoint (`WT_SESSION::checkpoint`: every dirty page of the cache written out; for an LSM
        /// table, whether it also flushes the in-memory chunk is not checked here), then waits until the
        /// process has written nothing for a second: LSM merges and eviction run in WiredTiger's own threads,
        /// and no call of its API reports them.
        fn settle(&self) -> StoreResult<()> {
            unsafe {
                let session = self.session_new()?;
                let rc = ((*session).checkpoint)(session, std::ptr::null());
                ((*session).close)(session, std::ptr::null());
                check(rc, "checkpoint")?;
            }
            super::quiet_wait()
        }
    }
}

#[cfg(test)]
mod device_tests {
    use super::*;

    #[test]
    fn a_block_device_s_counters_are_read_and_differenced() {
        let before = DeviceStats::parse(
            "31078540    84354 2648591792  8085510 24895768   469468 2187097272 18430799        0  3578108 27009516",
        )
        .unwrap();
        assert_eq!(
            (before.reads, before.read_sectors, before.read_ms),
            (31078540, 2648591792, 8085510)
        );
        assert_eq!(
            (before.writes, before.write_sectors, before.write_ms),
            (24895768, 2187097272, 18430799)
        );
        let after = DeviceStats {
            reads: before.reads + 3000,
            read_sectors: before.read_sectors + 48_000,
            read_ms: before.read_ms + 600,
            ..before
        };
        let d = before.since(&after, 1000);
        assert_eq!(d["reads_per_op"], 3.0);
        assert_eq!(d["read_us_each"], 200.0);
        assert_eq!(d["read_kib_per_op"], 24.0);
        assert_eq!(d["writes_per_op"], 0.0);
        assert!(d["write_us_each"].is_null());
        assert!(DeviceStats::parse("12 x").is_none());
        // the machine's own device, where it has one: a directory on it reads its counters
        if let Some(s) = DeviceStats::of(&std::env::temp_dir()) {
            assert!(s.reads > 0 || s.writes > 0);
        }
    }
}

#[cfg(all(test, feature = "peers"))]
mod tests {
    use super::*;

    /// `cosine export rocksdb`'s OPTIONS file is what RocksDB's own loader reads, and a database opened with the
    /// loaded options writes the same settings back in the OPTIONS file it keeps.
    #[test]
    fn an_exported_options_file_loads_and_rocksdb_writes_its_settings_back() {
        use cosine_design::rocksdb::RocksDbOptions;
        // 10 bits per key, and 9.6 (M_BF over N need not be whole)
        for (t, k, filters, bits) in [
            (10u64, 1u64, 12_500_000u64, "10"),
            (6, 5, 12_500_000, "10"),
            (10, 1, 12_000_000, "9.6"),
        ] {
            let mut d = cosine_design::Design::rocksdb_like(64 << 20, filters, 4 << 20);
            d.class = Some(cosine_design::DesignClass::Lsm);
            d.size_ratio = t;
            d.hot_runs = k;
            d.cold_runs = k;
            let o = RocksDbOptions::for_design(&d, 10_000_000, 1024, 16).unwrap();
            let root = std::env::temp_dir().join(format!(
                "cosine-rocksdb-options-{}-{t}-{k}-{bits}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&root);
            let (exported, db_dir) = (root.join("exported"), root.join("db"));
            std::fs::create_dir_all(&exported).unwrap();
            std::fs::write(exported.join("OPTIONS-000001"), o.options_file()).unwrap();
            // strict: an option RocksDB does not know is an error
            let (mut opts, cfs) = rocksdb::Options::load_latest(
                &exported,
                rocksdb::Env::new().unwrap(),
                false,
                rocksdb::Cache::new_lru_cache(8 << 20).unwrap(),
            )
            .unwrap();
            assert_eq!(cfs.len(), 1);
            opts.create_if_missing(true);
            let db = rocksdb::DB::open_cf_descriptors(&opts, &db_dir, cfs).unwrap();
            db.put(b"key", b"value").unwrap();
            assert_eq!(db.get(b"key").unwrap().as_deref(), Some(&b"value"[..]));
            drop(db);
            let mut written: Vec<std::path::PathBuf> = std::fs::read_dir(&db_dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-"))
                })
                .collect();
            written.sort();
            let text = std::fs::read_to_string(written.last().unwrap()).unwrap();
            let has = |line: &str| text.lines().any(|l| l.trim() == line);
            let style = if k == 1 {
                "compaction_style=kCompactionStyleLevel"
            } else {
                "compaction_style=kCompactionStyleUniversal"
            };
            let leveled = if k == 1 {
                vec![
                    format!("max_bytes_for_level_multiplier={t}.000000"),
                    format!("max_bytes_for_level_base={}", t * (32 << 20)),
                ]
            } else {
                // RocksDB writes the universal options as a map in an order of its own
                let universal = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("compaction_options_universal="))
                    .unwrap_or_default();
                for field in [
                    format!("max_merge_width={t};"),
                    format!("min_merge_width={k};"),
                    "size_ratio=1;".into(),
                    format!(
                        "max_size_amplification_percent={};",
                        o.universal_max_size_amplification_percent
                    ),
                ] {
                    assert!(universal.contains(&field), "{field} not in {universal}");
                }
                Vec::new()
            };
            for line in leveled.into_iter().chain([
                "level_compaction_dynamic_level_bytes=false".to_string(),
                "no_block_cache=true".to_string(),
                format!("write_buffer_size={}", 32 << 20),
                "max_write_buffer_number=2".to_string(),
                format!("db_write_buffer_size={}", 64 << 20),
                style.to_string(),
                format!(
                    "level0_file_num_compaction_trigger={}",
                    o.level0_file_num_compaction_trigger
                ),
                format!("target_file_size_base={}", d.file_bytes),
                "block_size=4096".to_string(),
                format!("filter_policy=bloomfilter:{bits}:false"),
                "cache_index_and_filter_blocks=false".to_string(),
                "compression=kNoCompression".to_string(),
            ]) {
                assert!(has(&line), "{line} not in RocksDB's OPTIONS file:\n{text}");
            }
            let _ = std::fs::remove_dir_all(&root);
        }
    }

    /// Every peer stores, reads back, scans in key order and read-modify-writes.
    #[test]
    fn every_peer_round_trips() {
        // FASTER has no scan and a 224 MiB minimum: its own test is in `fast`
        for engine in AVAILABLE
            .iter()
            .copied()
            .filter(|e| *e != "faster")
            .chain(["rocksdb-cosine"])
        {
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
            // settling (WiredTiger: a checkpoint through the FFI's method table) leaves every record readable
            s.settle().unwrap();
            assert_eq!(
                s.read(b"k0001").unwrap().as_deref(),
                Some(&b"VALue-1"[..]),
                "{engine} after settle"
            );
            assert_eq!(
                s.scan(b"k0000", 500).unwrap().len(),
                200,
                "{engine} after settle"
            );
            drop(s);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// FASTER (Microsoft's C++ hybrid-log key-value store, built from the sources libfaster-sys 0.11 vendors) through
/// our C interface `faster/shim.cc`.
#[cfg(feature = "faster")]
pub mod fast {
    use super::{proc_io, quiet_wait, Stripes};
    use anyhow::{anyhow, bail, Result};
    use cosine_ycsb::{IoCounters, Store, StoreError, StoreResult};
    use std::ffi::{c_char, c_void, CString};
    use std::path::{Path, PathBuf};

    type ReadCallback = unsafe extern "C" fn(*mut c_void, *const u8, u64);

    // faster/shim.cc; every operation runs in the calling thread's FASTER session, which the shim starts on
    // first use and ends when the thread exits
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
    // SAFETY: as above
    unsafe impl Sync for Faster {}

    /// The file in a store's directory naming its last checkpoint (token, then the hash table's size).
    const CHECKPOINT: &str = "cosine-faster-checkpoint";

    fn c_path(p: &Path) -> Result<CString> {
        CString::new(p.to_string_lossy().as_bytes())
            .map_err(|_| anyhow!("a NUL in {}", p.display()))
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
            let dir =
                std::env::temp_dir().join(format!("cosine-faster-test-{}", std::process::id()));
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
}
