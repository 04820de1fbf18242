//! What a scan asks the storage to read ahead, recorded at the storage: `FileIter` hands the read-ahead
//! policy the offsets of the blocks it reads and the data blocks' end.
use super::tests::{build, opts};
use super::*;
use crate::merge::EntryIter;

/// A backend over the OS that records every `prefetch` a read handle is asked for.
#[derive(Default)]
struct RecordingFs {
    asked: Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
}

struct RecordingRead {
    file: Arc<dyn cosine_storage::ReadFile>,
    asked: Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
}

impl cosine_storage::ReadFile for RecordingRead {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
    fn len(&self) -> std::io::Result<u64> {
        self.file.len()
    }
    fn prefetch(&self, offset: u64, len: u64) -> std::io::Result<()> {
        self.asked.lock().unwrap().push((offset, len));
        Ok(())
    }
}

impl cosine_storage::Fs for RecordingFs {
    fn create(
        &self,
        path: &Path,
        exclusive: bool,
    ) -> std::io::Result<Arc<dyn cosine_storage::WriteFile>> {
        cosine_storage::OsFs.create(path, exclusive)
    }
    fn open_append(&self, path: &Path) -> std::io::Result<Arc<dyn cosine_storage::WriteFile>> {
        cosine_storage::OsFs.open_append(path)
    }
    fn open_read(&self, path: &Path) -> std::io::Result<Arc<dyn cosine_storage::ReadFile>> {
        Ok(Arc::new(RecordingRead {
            file: cosine_storage::OsFs.open_read(path)?,
            asked: self.asked.clone(),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        cosine_storage::OsFs.rename(from, to)
    }
    fn remove(&self, path: &Path) -> std::io::Result<()> {
        cosine_storage::OsFs.remove(path)
    }
    fn list(&self, dir: &Path) -> std::io::Result<Vec<String>> {
        cosine_storage::OsFs.list(dir)
    }
    fn is_dir(&self, path: &Path) -> bool {
        cosine_storage::OsFs.is_dir(path)
    }
    fn create_dir_all(&self, dir: &Path) -> std::io::Result<()> {
        cosine_storage::OsFs.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        cosine_storage::OsFs.sync_dir(dir)
    }
    fn lock(&self, path: &Path) -> std::io::Result<Box<dyn std::any::Any + Send + Sync>> {
        cosine_storage::OsFs.lock(path)
    }
}

#[test]
fn a_scan_asks_the_storage_for_what_its_policy_decides_from_the_blocks_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let built = build(
        dir.path(),
        "recorded",
        opts(0.0, FilterGranularity::File, false),
        600,
    );
    let p = dir.path().join("recorded");
    let rec = RecordingFs::default();
    let asked = rec.asked.clone();
    let f = Arc::new(RunFile::open(&Storage::new(rec), &p, 1).unwrap());
    f.set_residency(true, false).unwrap();
    let handles = f.resident_fences().unwrap().handles().to_vec();
    let data_end = handles.last().map(|h| h.offset + u64::from(h.len));
    assert_eq!(handles.len(), built.meta.data_blocks as usize);
    assert!(handles.len() > 20);
    let per_block = f.meta.entries as f64 / f64::from(f.meta.data_blocks);
    // (start key, entries expected or none)
    for (start, expect) in [
        (None, None),
        (None, Some(5.5 * per_block)),
        (Some(&b"key000301"[..]), Some(3.0 * per_block)),
        (Some(&b"key000301"[..]), None),
        (None, Some(1e9)),
    ] {
        asked.lock().unwrap().clear();
        let it = FileIter::new(f.clone(), start, None).unwrap();
        let mut it = match expect {
            Some(n) => it.expecting(n),
            None => it,
        };
        while it.next_entry().unwrap().is_some() {}
        // the block the scan starts in, found as the fences find it
        let first = start
            .and_then(|s| f.resident_fences().unwrap().find(s))
            .unwrap_or(0);
        // the policy fed the offsets of the blocks the scan read, in order, with the data blocks' end
        let mut policy = match expect {
            Some(n) => super::Readahead::expecting(super::expected_readahead(n, &f.meta, data_end)),
            None => super::Readahead::default(),
        };
        let want: Vec<(u64, u64)> = handles[first..]
            .iter()
            .filter_map(|h| policy.on_read(h.offset, h.offset + u64::from(h.len), data_end))
            .collect();
        let got = asked.lock().unwrap().clone();
        assert_eq!(got, want, "start {start:?}, expect {expect:?}");
        assert!(!got.is_empty());
        // and what it asked for lies within the data blocks, starting no earlier than its first block
        assert!(got
            .iter()
            .all(|&(o, l)| o >= handles[first].offset && o + l <= data_end.unwrap()));
    }
    // a compaction reads through its own sequential handle and asks for nothing
    asked.lock().unwrap().clear();
    let stats = Arc::new(IoStats::default());
    let mut it = FileIter::new(f.clone(), None, Some((stats, 1, true))).unwrap();
    while it.next_entry().unwrap().is_some() {}
    assert!(asked.lock().unwrap().is_empty());
}
