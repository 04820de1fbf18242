//! fjall 3 (an LSM tree in Rust) behind the `Store` trait.

use super::common::{e, Entries, Modify, Stripes};
use super::os::{proc_io, wait_until_idle};
use anyhow::Result;
use cosine_ycsb::{IoCounters, Store, StoreResult};

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
                .data_block_compression_policy(CompressionPolicy::all(fjall::CompressionType::None))
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
