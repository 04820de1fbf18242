//! sled 0.34 (a Bw-tree-like store in Rust) behind the `Store` trait.

use super::common::{e, Entries, Modify, Stripes};
use super::os::{proc_io, quiet_wait};
use anyhow::Result;
use cosine_ycsb::{IoCounters, Store, StoreResult};

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
