//! One adapter per peer engine behind `cosine_ycsb::Store`, each given the same memory budget. Engines that
//! do not count their own I/O report /proc/self/io (bytes the process read from and wrote to storage, in 4 KiB
//! units; reads served by the OS page cache do not count).

#![allow(dead_code)]

use anyhow::Result;
use cosine_ycsb::{IoCounters, Store};

/// Peer engines compiled into this build.
pub const AVAILABLE: &[&str] = if cfg!(feature = "peers") { &["rocksdb", "fjall", "redb", "sled"] } else { &[] };

/// /proc/self/io as I/O counters.
pub fn proc_io() -> Option<IoCounters> {
    let s = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| s.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<u64>().ok());
    Some(IoCounters { reads: field("read_bytes:")? / 4096, background: field("write_bytes:")? / 4096 })
}

#[cfg(not(feature = "peers"))]
pub fn open(engine: &str, _memory: u64, _dir: &std::path::Path) -> Result<Box<dyn Store>> {
    anyhow::bail!("engine '{engine}' needs the `peers` feature")
}

#[cfg(feature = "peers")]
pub fn open(engine: &str, memory: u64, dir: &std::path::Path) -> Result<Box<dyn Store>> {
    Ok(match engine {
        "rocksdb" => Box::new(peers::Rocks::open(memory, dir)?),
        "fjall" => Box::new(peers::Fjall::open(memory, dir)?),
        "redb" => Box::new(peers::Redb::open(memory, dir)?),
        "sled" => Box::new(peers::Sled::open(memory, dir)?),
        other => anyhow::bail!("unknown engine '{other}'"),
    })
}

#[cfg(feature = "peers")]
mod peers {
    use super::proc_io;
    use anyhow::Result;
    use cosine_ycsb::{IoCounters, Store};
    use std::sync::Mutex;

    fn e<E: std::fmt::Display>(x: E) -> String {
        x.to_string()
    }

    /// Stripes that make the peers' read-modify-write atomic (none of them has one built in).
    struct Stripes(Vec<Mutex<()>>);
    impl Stripes {
        fn new() -> Self {
            Stripes((0..64).map(|_| Mutex::new(())).collect())
        }
        fn lock(&self, key: &[u8]) -> std::sync::MutexGuard<'_, ()> {
            let h = key.iter().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(*b as u64));
            self.0[(h % 64) as usize].lock().unwrap_or_else(|p| p.into_inner())
        }
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
        pub fn open(memory: u64, dir: &std::path::Path) -> Result<Self> {
            let mut opts = rocksdb::Options::default();
            opts.create_if_missing(true);
            opts.set_write_buffer_size((memory / 4) as usize);
            let mut table = rocksdb::BlockBasedOptions::default();
            table.set_block_cache(&rocksdb::Cache::new_lru_cache((memory * 3 / 4) as usize)?);
            table.set_bloom_filter(10.0, false);
            opts.set_block_based_table_factory(&table);
            Ok(Rocks { db: rocksdb::DB::open(&opts, dir)?, stripes: Stripes::new() })
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
            let it = self.db.iterator(rocksdb::IteratorMode::From(start, rocksdb::Direction::Forward));
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
            Ok(Fjall { db, ks, stripes: Stripes::new() })
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
            let db = redb::Database::builder().set_cache_size(memory as usize).create(dir.join("db.redb"))?;
            let tx = db.begin_write()?;
            tx.open_table(TABLE)?;
            tx.commit()?;
            Ok(Redb { db })
        }

        fn write(&self, f: impl FnOnce(&mut redb::Table<&[u8], &[u8]>) -> Result<(), String>) -> Result<(), String> {
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
            Ok(Sled { db: sled::Config::new().path(dir).cache_capacity(memory).open()?, stripes: Stripes::new() })
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
