//! The harsh crash image: what a power loss may leave of the bytes and names that were not made durable,
//! drawn from a seed. After RocksDB's `FaultInjectionTestFS`: out-of-order write-back leaves holes of zeros or of
//! stale garbage, a sector is torn, a file's size reaches past what was written, and metadata nobody synced
//! sometimes survives.

use super::{Inode, MemFs, State};
use crate::parent_of;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

/// The unit a disk writes atomically, and the size of the holes out-of-order write-back leaves.
pub const SECTOR: usize = 512;

/// `bytes` overwritten with zeros, or with garbage (a stale block's old contents).
fn fill(d: &mut StdRng, bytes: &mut [u8], garbage: bool) {
    if garbage {
        d.fill(bytes);
    } else {
        bytes.fill(0);
    }
}

/// What a power loss left of one file whose first `synced` bytes of `data` were made durable: the synced bytes
/// always, and of the rest one of
/// - nothing, or a prefix (the clean cut and the torn tail of [`MemFs::recover_torn`]);
/// - its sectors written back out of order: each kept or not, a kept one sometimes torn, the others holes of
///   zeros or of garbage, the file as long as written or up to its last sector kept;
/// - a prefix, the file then grown with zeros or garbage to a sector boundary and up to two sectors more (its
///   size reached the disk, its data did not).
fn image(d: &mut StdRng, data: &[u8], synced: usize) -> Vec<u8> {
    let n = data.len();
    let synced = synced.min(n);
    let unsynced = (n - synced) as u64;
    match d.random_range(0..5) {
        _ if unsynced == 0 => data.to_vec(),
        0 => data[..synced].to_vec(),
        1 => data[..synced + d.random_range(0..=unsynced) as usize].to_vec(),
        2 | 3 => {
            let garbage = d.random_bool(0.5);
            let p = d.random_range(0.2..0.8);
            let mut out = data.to_vec();
            let mut last_kept = synced;
            for sector in synced / SECTOR..n.div_ceil(SECTOR) {
                let lo = (sector * SECTOR).max(synced);
                let hi = ((sector + 1) * SECTOR).min(n);
                if d.random_bool(p) {
                    if d.random_bool(0.15) {
                        // torn: the sector's first bytes new, the rest not
                        let cut = d.random_range(lo..hi);
                        fill(d, &mut out[cut..hi], garbage);
                    }
                    last_kept = hi;
                } else {
                    fill(d, &mut out[lo..hi], garbage);
                }
            }
            if d.random_bool(0.5) {
                out.truncate(last_kept);
            }
            out
        }
        _ => {
            let keep = synced + d.random_range(0..=unsynced) as usize;
            let mut out = data[..keep].to_vec();
            let to = keep.div_ceil(SECTOR) * SECTOR + d.random_range(0..3) * SECTOR;
            let garbage = d.random_bool(0.5);
            let from = out.len();
            out.resize(to.max(from), 0);
            fill(d, &mut out[from..], garbage);
            out
        }
    }
}

impl MemFs {
    /// A new file system holding what a power loss now might leave, drawn from `seed` (the same seed, the same
    /// image): harsher than [`MemFs::recover`]. Every byte a `sync` covered and every name a `sync_dir`
    /// covered survives as there. Beyond them:
    /// - the namespace is as of some moment since (a prefix of the unsynced creates, renames, removes and new
    ///   directories survives, as an ordered journal commits them; half the images keep none);
    /// - each surviving file keeps, of the bytes written after its last sync, nothing, a prefix, its sectors
    ///   written back out of order (holes of zeros or garbage, torn sectors), or a prefix with its size grown
    ///   past it over zeros or garbage.
    ///
    /// Garbage is random bytes, never a stale block's valid records. Each directory's names are as of its own
    /// last sync or the moment, whichever is later, where an ordered journal's directory fsync would commit
    /// every earlier change in every directory: a rename across two directories can come out half done here
    /// (the engine renames within one directory only).
    pub fn recover_harsh(&self, seed: u64) -> MemFs {
        let s = self.0.lock();
        let mut d = StdRng::seed_from_u64(seed);
        // the moment the namespace is as of, where no sync made it later
        let cut = if d.random_bool(0.5) {
            0
        } else {
            d.random_range(0..=s.clock)
        };
        // a directory survives when it and every ancestor were synced into their parents or made by then
        let made = |dir: &PathBuf| {
            s.durable_dirs.contains(dir) || s.dir_made.get(dir).is_some_and(|&t| t <= cut)
        };
        let dirs: BTreeSet<PathBuf> = s
            .dirs
            .iter()
            .filter(|dir| dir.ancestors().all(|a| made(&a.to_path_buf())))
            .cloned()
            .collect();
        let mut out = State {
            dirs: dirs.clone(),
            durable_dirs: dirs,
            ..State::default()
        };
        for (path, changes) in &s.history {
            if !out.dirs.contains(parent_of(path)) {
                continue;
            }
            let synced_at = s.dir_synced.get(parent_of(path)).copied().unwrap_or(0);
            let at = synced_at.max(cut);
            let Some(ino) = changes
                .iter()
                .take_while(|(t, _)| *t <= at)
                .last()
                .and_then(|(_, ino)| *ino)
            else {
                continue;
            };
            let node = &s.inodes[ino];
            let data = image(&mut d, &node.data, node.synced);
            out.files.insert(path.clone(), out.inodes.len());
            out.durable.insert(path.clone(), out.inodes.len());
            out.inodes.push(Inode {
                synced: data.len(),
                data,
            });
        }
        out.settle();
        MemFs(Arc::new(Mutex::new(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::p;
    use super::*;
    use crate::{Fs, Storage};

    #[test]
    fn synced_bytes_and_names_always_survive() {
        let fs = MemFs::new();
        fs.create_dir_all(p("/db")).unwrap();
        fs.sync_dir(p("/")).unwrap();
        let a = fs.create(p("/db/a"), true).unwrap();
        a.append(&[7; 3000]).unwrap();
        a.sync().unwrap();
        fs.sync_dir(p("/db")).unwrap();
        a.append(&[9; 5000]).unwrap();
        for seed in 0..200 {
            let got = Storage::new(fs.recover_harsh(seed))
                .read(p("/db/a"))
                .unwrap();
            assert!(got.len() >= 3000 && got[..3000] == [7; 3000], "seed {seed}");
        }
    }

    #[test]
    fn the_images_hold_holes_garbage_torn_sectors_and_grown_files() {
        let fs = MemFs::new();
        let a = fs.create(p("/a"), true).unwrap();
        a.append(&[1; 1000]).unwrap();
        a.sync().unwrap();
        fs.sync_dir(p("/")).unwrap();
        a.append(&[2; 4000]).unwrap();
        let (mut hole, mut garbage, mut grown, mut clean) = (0, 0, 0, 0);
        for seed in 0..400 {
            let got = Storage::new(fs.recover_harsh(seed)).read(p("/a")).unwrap();
            let written = &got[1000..got.len().min(5000)];
            // a zero or garbage byte with a kept one after it: a hole
            if let Some(last) = written.iter().rposition(|b| *b == 2) {
                if written[..last].iter().any(|b| *b != 2) {
                    hole += 1;
                }
            }
            garbage += usize::from(got.iter().any(|b| ![0, 1, 2].contains(b)));
            grown += usize::from(got.len() > 5000);
            clean += usize::from(got.iter().all(|b| *b != 0 && [1, 2].contains(b)));
        }
        assert!(
            hole > 20 && garbage > 20 && grown > 20 && clean > 20,
            "{hole} {garbage} {grown} {clean}"
        );
    }

    #[test]
    fn unsynced_names_survive_as_a_prefix_of_their_changes() {
        let fs = MemFs::new();
        fs.create(p("/first"), true).unwrap();
        fs.create(p("/second"), true).unwrap();
        let (mut none, mut one, mut both) = (0, 0, 0);
        for seed in 0..300 {
            let r = fs.recover_harsh(seed);
            match (
                r.open_read(p("/first")).is_ok(),
                r.open_read(p("/second")).is_ok(),
            ) {
                (false, false) => none += 1,
                (true, false) => one += 1,
                (true, true) => both += 1,
                // the second was made after the first: never there alone
                (false, true) => {
                    panic!("seed {seed}: a later name survived without an earlier one")
                }
            }
        }
        assert!(none > 50 && one > 10 && both > 10, "{none} {one} {both}");
    }

    #[test]
    fn a_rename_survives_whole_or_not_at_all() {
        let fs = MemFs::new();
        let f = fs.create(p("/x.tmp"), true).unwrap();
        f.append(b"new").unwrap();
        f.sync().unwrap();
        fs.rename(p("/x.tmp"), p("/x")).unwrap();
        for seed in 0..200 {
            let r = fs.recover_harsh(seed);
            let names = r.list(p("/")).unwrap();
            assert!(names.len() <= 1, "seed {seed}: {names:?}");
            if names == ["x"] {
                assert_eq!(Storage::new(r).read(p("/x")).unwrap(), b"new");
            }
        }
    }

    #[test]
    fn an_interrupted_append_leaves_part_of_its_bytes() {
        let mut parts = BTreeSet::new();
        for seed in 0..50 {
            let fs = MemFs::new();
            let f = fs.create(p("/f"), true).unwrap();
            fs.crash_after_seeded(0, seed);
            assert!(f.append(&[5; 100]).is_err());
            parts.insert(fs.restart().open_read(p("/f")).unwrap().len().unwrap());
        }
        // kept parts of many lengths, far apart
        assert!(parts.len() > 10, "{parts:?}");
        let (lo, hi) = (parts.first().copied(), parts.last().copied());
        assert!(hi.zip(lo).is_some_and(|(h, l)| h - l >= 50), "{parts:?}");
    }
}
