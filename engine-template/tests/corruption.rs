//! A flipped byte anywhere in a real data directory (run files, log, manifest) is detected: opening or reading
//! gives `Error::Corruption` (or the read does not touch the damage and returns the right data); never wrong
//! data, never a panic.

mod common;

use cosine_engine::{Engine, Error, Options, SyncMode};
use std::collections::BTreeMap;
use std::path::Path;

fn build(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let (_, design) = common::shapes().into_iter().next().unwrap();
    let e = Engine::open_with(dir, &design, Options::with_sync(SyncMode::Always)).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..1500u32 {
        let k = format!("key{:06}", (i * 7919) % 1500).into_bytes();
        let v = format!("value{i}").into_bytes();
        e.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    e.flush().unwrap();
    e.wait_for_compactions().unwrap();
    // some writes stay in the log only
    for i in 0..40u32 {
        let k = format!("log{i:04}").into_bytes();
        e.put(&k, b"in the log").unwrap();
        model.insert(k, b"in the log".to_vec());
    }
    e.close().unwrap();
    model
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Opens the damaged copy and reads everything; Ok(()) if every answer was right, Err if corruption was
/// reported. Panics on wrong data.
fn check(dir: &Path, model: &BTreeMap<Vec<u8>, Vec<u8>>, what: &str) -> Result<(), Error> {
    let (_, design) = common::shapes().into_iter().next().unwrap();
    let e = common::open_unsynced(dir, &design)?;
    let mut first_err = None;
    for (k, v) in model {
        match e.get(k) {
            Ok(got) => assert_eq!(
                got.as_ref(),
                Some(v),
                "{what}: wrong data for {:?}",
                String::from_utf8_lossy(k)
            ),
            Err(err) => {
                first_err.get_or_insert(err);
            }
        }
    }
    match e.scan(.., usize::MAX) {
        Ok(all) => {
            let want: Vec<(Vec<u8>, Vec<u8>)> =
                model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(all, want, "{what}: scan returned wrong data");
        }
        Err(err) => {
            first_err.get_or_insert(err);
        }
    }
    drop(e);
    match first_err {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

#[test]
fn flipped_bytes_anywhere_are_detected() {
    let base = tempfile::tempdir().unwrap();
    let model = build(base.path());
    let mut files: Vec<_> = std::fs::read_dir(base.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files
        .iter()
        .any(|p| p.extension().is_some_and(|x| x == "run")));
    assert!(files
        .iter()
        .any(|p| p.extension().is_some_and(|x| x == "wal")));
    let (mut detected, mut clean) = (0, 0);
    for file in &files {
        let len = std::fs::metadata(file).unwrap().len() as usize;
        if len == 0 {
            continue;
        }
        let positions: Vec<usize> = (0..24).map(|i| i * len / 24).chain([len - 1]).collect();
        for pos in positions {
            let scratch = tempfile::tempdir().unwrap();
            copy_dir(base.path(), scratch.path());
            let target = scratch.path().join(file.file_name().unwrap());
            let mut bytes = std::fs::read(&target).unwrap();
            bytes[pos] ^= 0x40;
            std::fs::write(&target, &bytes).unwrap();
            let what = format!("{} byte {pos}", file.file_name().unwrap().to_string_lossy());
            match check(scratch.path(), &model, &what) {
                Ok(()) => clean += 1,
                Err(Error::Corruption {
                    file: f, offset, ..
                }) => {
                    assert!(
                        f.ends_with(file.file_name().unwrap()),
                        "{what}: blamed {f:?}"
                    );
                    assert!(
                        offset as usize <= pos + 1,
                        "{what}: reported offset {offset}"
                    );
                    detected += 1;
                }
                Err(other) => panic!("{what}: expected a corruption error, got {other}"),
            }
        }
    }
    // a flip is only harmless where no read depends on it (e.g. the padding of the log's last record)
    assert!(
        detected > clean * 10,
        "detected {detected}, undetected {clean}"
    );
}
