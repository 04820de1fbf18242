use super::*;
use crate::merge::EntryIter;

pub(super) fn opts(bits: f64, g: FilterGranularity, hash: bool) -> WriterOptions {
    WriterOptions {
        block_bytes: 256,
        bits_per_key: bits,
        granularity: g,
        index: if hash {
            IndexKind::Hash
        } else {
            IndexKind::Fences
        },
    }
}

pub(super) fn build(dir: &Path, name: &str, o: WriterOptions, n: u32) -> Arc<RunFile> {
    let p = dir.join(name);
    let mut w = RunFileWriter::create(&Storage::default(), &p, o).unwrap();
    for i in 0..n {
        let k = format!("key{:06}", i * 2);
        let v = if i % 7 == 0 {
            None
        } else {
            Some(format!("value-{i}").into_bytes())
        };
        w.add(k.as_bytes(), i as u64 + 1, v.as_deref()).unwrap();
    }
    let meta = w.finish().unwrap();
    assert_eq!(meta.entries, n as u64);
    Arc::new(RunFile::open(&Storage::default(), &p, 1).unwrap())
}

#[test]
fn every_shape_finds_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let stats = IoStats::default();
    for (i, (o, hot)) in [
        (opts(10.0, FilterGranularity::File, false), true),
        (opts(10.0, FilterGranularity::Block, false), true),
        (opts(0.0, FilterGranularity::File, false), false),
        (opts(0.0, FilterGranularity::File, true), false),
    ]
    .into_iter()
    .enumerate()
    {
        let f = build(dir.path(), &format!("f{i}"), o, 500);
        f.set_residency(hot, true).unwrap();
        for j in 0..500u32 {
            let k = format!("key{:06}", j * 2);
            let got = f.get(k.as_bytes(), &stats, 1).unwrap().unwrap();
            assert_eq!(got.0, j as u64 + 1);
            assert_eq!(got.1.is_none(), j % 7 == 0);
            assert!(f
                .get(format!("key{:06}", j * 2 + 1).as_bytes(), &stats, 1)
                .unwrap()
                .is_none());
        }
        let mut it = FileIter::new(f.clone(), Some(b"key000101"), None).unwrap();
        assert_eq!(it.next_entry().unwrap().unwrap().0, b"key000102".to_vec());
    }
    let s = stats.snapshot(1)[0];
    assert!(s.filter_negatives > 0 && s.index_reads > 0);
}

#[test]
fn a_seek_between_blocks_reads_only_the_later_block() {
    let dir = tempfile::tempdir().unwrap();
    for hot in [true, false] {
        let f = build(
            dir.path(),
            &format!("s{hot}"),
            opts(0.0, FilterGranularity::File, false),
            500,
        );
        f.set_residency(hot, false).unwrap();
        // the fences the level's residency would charge are the fences loaded
        if hot {
            let (fences, _) = f.memory_bytes();
            assert_eq!(
                f.meta.fence_bytes as usize,
                fences - f.top.memory_bytes(),
                "fence bytes"
            );
        }
        let stats = Arc::new(IoStats::default());
        for j in 0..499u32 {
            // every odd key lies in a gap, some of them between two blocks
            let start = format!("key{:06}", j * 2 + 1);
            let mut it = FileIter::new(
                f.clone(),
                Some(start.as_bytes()),
                Some((stats.clone(), 1, false)),
            )
            .unwrap();
            let before = stats.snapshot(1)[0];
            assert_eq!(
                it.next_entry().unwrap().unwrap().0,
                format!("key{:06}", j * 2 + 2).into_bytes()
            );
            let after = stats.snapshot(1)[0];
            assert_eq!(
                after.block_reads - before.block_reads,
                1,
                "{start} hot={hot}"
            );
            assert_eq!(after.index_reads - before.index_reads, u64::from(!hot));
        }
    }
}

#[test]
fn cold_lookup_reads_an_index_block_and_a_data_block() {
    let dir = tempfile::tempdir().unwrap();
    let f = build(
        dir.path(),
        "cold",
        opts(0.0, FilterGranularity::File, false),
        2000,
    );
    let stats = IoStats::default();
    f.get(b"key001000", &stats, 3).unwrap().unwrap();
    let s = stats.snapshot(3)[2];
    assert_eq!((s.index_reads, s.block_reads), (1, 1));
    f.set_residency(true, false).unwrap();
    f.get(b"key001000", &stats, 3).unwrap().unwrap();
    let s = stats.snapshot(3)[2];
    assert_eq!((s.index_reads, s.block_reads), (1, 2));
}

#[test]
fn every_flipped_byte_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let f = build(
        dir.path(),
        "orig",
        opts(10.0, FilterGranularity::File, false),
        120,
    );
    let bytes = std::fs::read(f.path()).unwrap();
    let stats = IoStats::default();
    for pos in (0..bytes.len()).step_by(7) {
        let mut b = bytes.clone();
        b[pos] ^= 0x5a;
        let p = dir.path().join("flipped");
        std::fs::write(&p, &b).unwrap();
        let res = RunFile::open(&Storage::default(), &p, 2).and_then(|file| {
            file.set_residency(true, true)?;
            for j in 0..120u32 {
                let k = format!("key{:06}", j * 2);
                match file.get(k.as_bytes(), &stats, 1)? {
                    Some((seq, v)) => {
                        assert_eq!(seq, j as u64 + 1, "wrong data at flipped byte {pos}");
                        assert_eq!(v.is_none(), j % 7 == 0, "wrong data at flipped byte {pos}");
                    }
                    None => {
                        // a flipped filter bit may only hide a key if the filter was rejected: never silently
                        panic!("key {k} lost with flipped byte {pos}");
                    }
                }
            }
            Ok(())
        });
        assert!(
            matches!(res, Ok(()) | Err(Error::Corruption { .. })),
            "byte {pos}: {res:?}"
        );
    }
}

#[test]
fn scans_see_every_entry_once_and_detect_every_flipped_byte() {
    let dir = tempfile::tempdir().unwrap();
    let f = build(
        dir.path(),
        "ahead",
        opts(0.0, FilterGranularity::File, false),
        600,
    );
    f.set_residency(true, false).unwrap();
    let blocks = f.resident_fences().unwrap().len() as u64;
    assert!(blocks > 20, "{blocks} blocks");
    // a scan from the start sees every entry in order, counted once per block used
    let stats = Arc::new(IoStats::default());
    let mut it = FileIter::new(f.clone(), None, Some((stats.clone(), 1, false))).unwrap();
    let mut n = 0u32;
    while let Some(e) = it.next_entry().unwrap() {
        assert_eq!(e.0, format!("key{:06}", n * 2).into_bytes());
        n += 1;
    }
    assert_eq!(n, 600);
    assert_eq!(stats.snapshot(1)[0].block_reads, blocks);
    // a compaction's iterator reads the same entries
    let mut it = FileIter::new(f.clone(), None, Some((stats.clone(), 1, true))).unwrap();
    let mut m = 0;
    while it.next_entry().unwrap().is_some() {
        m += 1;
    }
    assert_eq!(m, 600);
    // a flipped byte in any data block is an error, never wrong or missing data
    let bytes = std::fs::read(f.path()).unwrap();
    let data_end = f
        .resident_fences()
        .unwrap()
        .handles()
        .last()
        .map_or(0, |h| h.offset + h.len as u64);
    for pos in (0..data_end as usize).step_by(13) {
        let mut b = bytes.clone();
        b[pos] ^= 0x5a;
        let p = dir.path().join("flipped-ahead");
        std::fs::write(&p, &b).unwrap();
        let res = RunFile::open(&Storage::default(), &p, 2).and_then(|file| {
            let file = Arc::new(file);
            file.set_residency(true, false)?;
            let mut it = FileIter::new(file, None, Some((stats.clone(), 1, false)))?;
            let mut i = 0u32;
            while let Some(e) = it.next_entry()? {
                assert_eq!(e.0, format!("key{:06}", i * 2).into_bytes(), "byte {pos}");
                assert_eq!(e.1, i as u64 + 1, "byte {pos}");
                i += 1;
            }
            assert_eq!(i, 600, "byte {pos}: entries lost");
            Ok(())
        });
        assert!(
            matches!(res, Err(Error::Corruption { .. })),
            "byte {pos} in the data blocks: {res:?}"
        );
    }
}

#[test]
fn a_scan_of_known_length_reads_ahead_what_its_entries_take() {
    let dir = tempfile::tempdir().unwrap();
    let f = build(
        dir.path(),
        "expect",
        opts(0.0, FilterGranularity::File, false),
        600,
    );
    f.set_residency(true, false).unwrap();
    let meta = &f.meta;
    let per_block = meta.entries as f64 / f64::from(meta.data_blocks);
    let data_end = f
        .resident_fences()
        .unwrap()
        .handles()
        .last()
        .map(|h| h.offset + u64::from(h.len))
        .unwrap();
    assert!(data_end < meta.size);
    let block = data_end as f64 / f64::from(meta.data_blocks);
    assert!(per_block > 2.0 && meta.data_blocks > 20, "{meta:?}");
    let ahead = |entries: f64| super::expected_readahead(entries, meta, Some(data_end));
    // entries that fit in the block the scan starts in: nothing ahead of it
    assert_eq!(ahead(per_block), 0);
    assert_eq!(ahead(0.5), 0);
    // more: as many blocks again as they fill, whole, of the data blocks' size (the whole file's when the data
    // blocks' end is unknown)
    assert_eq!(ahead(3.5 * per_block), (4.0 * block) as u64);
    assert!(super::expected_readahead(3.5 * per_block, meta, None) > ahead(3.5 * per_block));
    // never more than the most a scan reads ahead, and nothing for a file that says nothing of its blocks
    assert_eq!(ahead(1e9), super::iter::SCAN_READAHEAD_MAX);
    let mut empty = meta.clone();
    empty.data_blocks = 0;
    assert_eq!(super::expected_readahead(100.0, &empty, None), 0);
    assert_eq!(ahead(f64::NAN), 0);
    // the readahead changes what the OS is asked for, never what the scan sees or the blocks it counts
    for start in [None, Some(&b"key000301"[..])] {
        let seen = |expect: Option<f64>| {
            let stats = Arc::new(IoStats::default());
            let it = FileIter::new(f.clone(), start, Some((stats.clone(), 1, false))).unwrap();
            let mut it = match expect {
                Some(n) => it.expecting(n),
                None => it,
            };
            let mut keys = Vec::new();
            while let Some(e) = it.next_entry().unwrap() {
                keys.push(e.0);
            }
            (keys, stats.snapshot(1)[0].block_reads)
        };
        let plain = seen(None);
        assert!(!plain.0.is_empty());
        assert_eq!(seen(Some(50.0)), plain);
        assert_eq!(seen(Some(1e9)), plain);
    }
}

/// Blocks of 4 KiB from offset 0: what a scan that reads blocks `from..to` asks the OS for.
fn asked(mut r: super::Readahead, from: u64, to: u64, data_end: Option<u64>) -> Vec<(u64, u64)> {
    (from..to)
        .filter_map(|b| r.on_read(b * 4096, (b + 1) * 4096, data_end))
        .collect()
}

#[test]
fn a_scan_without_a_hint_streams_from_its_second_block_doubling_its_window() {
    use super::{SCAN_READAHEAD_MAX, SCAN_READAHEAD_START as S};
    let r = super::Readahead::default();
    // nothing at the first block; at the second the next window; again, twice as large, at each window's last
    // block (8 KiB = 2 blocks, then 16, 32, ...)
    assert_eq!(asked(r, 0, 1, None), vec![]);
    assert_eq!(
        asked(r, 0, 8, None),
        vec![(2 * 4096, S), (4 * 4096, 2 * S), (8 * 4096, 4 * S)]
    );
    let long = asked(r, 0, 4096, None);
    assert!(long.iter().all(|&(_, len)| len <= SCAN_READAHEAD_MAX));
    assert_eq!(long.last().unwrap().1, SCAN_READAHEAD_MAX);
    // every block past the second was asked for before the scan read it
    let covered = |b: u64| {
        long.iter()
            .any(|&(o, l)| o <= b * 4096 && (b + 1) * 4096 <= o + l)
    };
    assert!((2..4096).all(covered));
}

#[test]
fn a_scan_with_a_hint_asks_once_and_streams_only_past_it() {
    use super::SCAN_READAHEAD_START as S;
    // a hint of 3 blocks past the first: one request for 4 blocks, then nothing while the scan reads them,
    // even the last (a scan reading its whole share most often stops there)
    let r = super::Readahead::expecting(3 * 4096);
    assert_eq!(asked(r, 10, 14, None), vec![(10 * 4096, 4 * 4096)]);
    // past the hint: the first block past is read alone, the next streams as a scan without a hint does
    assert_eq!(asked(r, 10, 15, None), vec![(10 * 4096, 4 * 4096)]);
    assert_eq!(
        asked(r, 10, 16, None),
        vec![(10 * 4096, 4 * 4096), (16 * 4096, S)]
    );
    // never past the data blocks' end, and nothing at all where the first block is the last
    assert_eq!(
        asked(r, 10, 12, Some(12 * 4096)),
        vec![(10 * 4096, 2 * 4096)]
    );
    assert_eq!(asked(r, 10, 11, Some(11 * 4096)), vec![]);
    // a stream knowing the data's end (a share that fits in the first block) stops its windows there
    let r = super::Readahead::default();
    assert_eq!(
        asked(r, 0, 5, Some(5 * 4096)),
        vec![(2 * 4096, 2 * 4096), (4 * 4096, 4096)]
    );
    assert_eq!(asked(r, 0, 2, Some(2 * 4096)), vec![]);
    // no hint (0 bytes): as a scan without one
    assert_eq!(super::Readahead::expecting(0), super::Readahead::default());
}

#[test]
fn an_entry_takes_its_header_and_its_bytes_as_the_cost_model_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(0.0, FilterGranularity::File, false);
    o.block_bytes = 1 << 20;
    let mut w = RunFileWriter::create(&Storage::default(), &dir.path().join("h"), o).unwrap();
    let start = w.bytes();
    w.add(b"k1", 1, Some(&[7; 100])).unwrap();
    let first = w.bytes();
    w.add(b"k2", 2, Some(&[7; 100])).unwrap();
    // the second entry of a block adds its header, its key and its value (the first also opens the block)
    assert_eq!(
        (w.bytes() - first) as usize,
        cosine_design::shape::RUN_ENTRY_HEADER_BYTES + 2 + 100
    );
    assert!(first > start);
}

#[test]
fn a_files_bytes_per_entry_are_what_the_cost_model_counts() {
    let dir = tempfile::tempdir().unwrap();
    for (key, value, block) in [
        (23usize, 1000usize, 8192usize),
        (16, 100, 4096),
        (23, 4000, 4096),
        (23, 100, 4096),
    ] {
        let mut o = opts(0.0, FilterGranularity::File, false);
        o.block_bytes = block;
        for n in [5u64, 2000] {
            let p = dir.path().join(format!("f{key}-{value}-{block}-{n}"));
            let mut w = RunFileWriter::create(&Storage::default(), &p, o).unwrap();
            for i in 0..n {
                let k = format!("{i:0key$}");
                w.add(k.as_bytes(), i + 1, Some(&vec![5; value])).unwrap();
            }
            let meta = w.finish().unwrap();
            // (a last, partial block's framing is not spread over a whole block's entries: 60 bytes of slack)
            let counted = n as f64 * cosine_design::shape::run_entry_disk_bytes(key, value, block)
                + cosine_design::shape::run_file_overhead_bytes(key) as f64;
            let fences =
                n as f64 * cosine_design::shape::run_fence_memory_per_entry(key, value, block);
            assert!(
                (meta.fence_bytes as f64 - fences).abs() < 0.002 * fences + (key + 20) as f64,
                "{key}+{value} in {block}, {n} entries: {} fence bytes, counted {fences}",
                meta.fence_bytes
            );
            assert!(
                (meta.size as f64 - counted).abs() < 0.0005 * counted + 60.0,
                "{key}+{value} in {block}, {n} entries: {} bytes, counted {counted}",
                meta.size
            );
        }
    }
}
