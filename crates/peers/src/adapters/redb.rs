//! redb 4 (a copy-on-write B-tree in Rust) behind the `Store` trait.

use super::common::{e, Entries, Modify};
use super::os::proc_io;
use anyhow::Result;
use cosine_ycsb::{IoCounters, Store, StoreResult};

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
