//! RocksDB 7.8.3 (Debian's librocksdb-dev) through the `rocksdb` crate: the benchmark's configuration for a
//! memory budget, the leveled design Cosine chose (`rocksdb-cosine`), and the settle that waits out its flushes
//! and compactions without flushing into a write stall.

use super::common::{e, Entries, Modify, Stripes};
use super::os::{proc_io, wait_until_idle};
use anyhow::Result;
use cosine_ycsb::{IoCounters, Store, StoreResult};

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

fn rocks_options(memtable: u64, cache: u64, bits: f64, block: usize) -> Result<rocksdb::Options> {
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
        let (memtable, cache) = cosine_learn::knobs::rocksdb_memory_split(d.flush_bytes(), memory);
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

#[cfg(test)]
mod tests {
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
}
