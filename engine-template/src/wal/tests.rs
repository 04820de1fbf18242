//! The log's tests: records as the cost model prices them, and replay under each recovery mode.

use super::*;
use crate::error::Error;

/// Segment 1 of `dir` replayed under the torn-tail rule, as the last segment or not.
fn tail_rule(dir: &Path, is_last: bool) -> Result<Vec<Record>> {
    replay(
        &Storage::default(),
        dir,
        1,
        is_last,
        WalRecovery::TolerateCorruptedTailRecords,
    )
}

#[test]
fn a_put_s_record_is_as_long_as_the_cost_model_prices_it() {
    for (k, v) in [(16usize, 1008usize), (8, 0), (100, 4096)] {
        let mut buf = Vec::new();
        encode(true, 7, &vec![1; k], &vec![2; v], &mut buf);
        assert_eq!(buf.len(), cosine_design::shape::log_record_bytes(k, v));
        let mut mark = Vec::new();
        encode_mark(7, 1 << 40, u64::MAX, &mut mark);
        assert_eq!(mark.len(), cosine_design::shape::LOG_SYNC_MARK_BYTES);
        assert_eq!(mark.len(), MARK_BYTES);
        assert_eq!(
            entry_bytes(&vec![1; k], Some(&vec![2; v])) as usize + HEADER,
            buf.len()
        );
    }
}

#[test]
fn a_sync_mode_is_found_again_by_its_name() {
    for m in [SyncMode::Always, SyncMode::Batch, SyncMode::Never] {
        assert_eq!(SyncMode::from_name(m.name()), Some(m));
    }
    assert_eq!(SyncMode::from_name("sometimes"), None);
}

fn write_log(dir: &Path, n: u64) -> Vec<u8> {
    let mut w = WalWriter::create(&Storage::default(), dir, 1, 0).unwrap();
    let mut buf = Vec::new();
    for i in 0..n {
        buf.clear();
        encode(
            i % 3 != 0,
            i,
            format!("k{i}").as_bytes(),
            b"value",
            &mut buf,
        );
        w.append(&buf).unwrap();
    }
    w.sync().unwrap();
    std::fs::read(segment_path(dir, 1)).unwrap()
}

#[test]
fn replays_every_record() {
    let dir = tempfile::tempdir().unwrap();
    write_log(dir.path(), 10);
    let recs = tail_rule(dir.path(), true).unwrap();
    assert_eq!(recs.len(), 10);
    assert_eq!(recs[3].value, None);
    assert_eq!(recs[4].value.as_deref(), Some(&b"value"[..]));
}

#[test]
fn torn_tail_is_truncated_and_damage_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = write_log(dir.path(), 10);
    // a torn append: the last record cut short
    std::fs::write(segment_path(dir.path(), 1), &bytes[..bytes.len() - 3]).unwrap();
    assert_eq!(tail_rule(dir.path(), true).unwrap().len(), 9);
    let mut nine = Vec::new();
    for i in 0..9u64 {
        encode(
            i % 3 != 0,
            i,
            format!("k{i}").as_bytes(),
            b"value",
            &mut nine,
        );
    }
    assert_eq!(
        std::fs::metadata(segment_path(dir.path(), 1))
            .unwrap()
            .len() as usize,
        nine.len()
    );
    // a flipped byte in the middle is corruption, not the end of the log
    let mut bad = bytes.clone();
    bad[bytes.len() / 2] ^= 1;
    std::fs::write(segment_path(dir.path(), 1), &bad).unwrap();
    assert!(matches!(
        tail_rule(dir.path(), true),
        Err(Error::Corruption { .. })
    ));
    // and so is a flipped byte in the last record
    let mut bad = bytes.clone();
    let last = bad.len() - 2;
    bad[last] ^= 1;
    std::fs::write(segment_path(dir.path(), 1), &bad).unwrap();
    assert!(matches!(
        tail_rule(dir.path(), true),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn a_zero_filled_tail_is_torn_but_zeros_elsewhere_are_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::default();
    let mut w = WalWriter::create(&storage, dir.path(), 1, 0).unwrap();
    let mut buf = Vec::new();
    for i in 0..4u64 {
        buf.clear();
        encode(true, i, format!("k{i}").as_bytes(), &[7u8; 700], &mut buf);
        w.append(&buf).unwrap();
    }
    w.sync().unwrap();
    let path = segment_path(dir.path(), 1);
    let bytes = std::fs::read(&path).unwrap();
    let record = bytes.len() / 4;
    // power loss: the file grew, but the last record's sectors from a boundary inside it are zeros
    let boundary = (3 * record / SECTOR + 1) * SECTOR;
    assert!(boundary > 3 * record && boundary < bytes.len());
    let mut torn = bytes.clone();
    torn[boundary..].fill(0);
    std::fs::write(&path, &torn).unwrap();
    assert_eq!(tail_rule(dir.path(), true).unwrap().len(), 3);
    assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, 3 * record);
    // the same zeros in a segment that is not the last: corruption
    std::fs::write(&path, &torn).unwrap();
    assert!(matches!(
        tail_rule(dir.path(), false),
        Err(Error::Corruption { .. })
    ));
    // zero bytes just before the boundary (a sequence number's high bytes, say) do not hide the lost sector
    let mut torn = bytes.clone();
    torn[boundary - 2..].fill(0);
    std::fs::write(&path, &torn).unwrap();
    assert_eq!(tail_rule(dir.path(), true).unwrap().len(), 3);
    // zeros from past the last sector boundary inside the record are damage, not a lost sector
    let last_boundary = (bytes.len() - 1) / SECTOR * SECTOR;
    assert!(last_boundary > 3 * record);
    let mut bad = bytes.clone();
    bad[last_boundary + 3..].fill(0);
    std::fs::write(&path, &bad).unwrap();
    assert!(matches!(
        tail_rule(dir.path(), true),
        Err(Error::Corruption { .. })
    ));
    // zeros inside an earlier record, with whole records after them: corruption
    let mut bad = bytes.clone();
    bad[record + 20..record + 40].fill(0);
    std::fs::write(&path, &bad).unwrap();
    assert!(matches!(
        tail_rule(dir.path(), true),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn a_batch_is_one_record_a_torn_tail_drops_whole() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::default();
    let mut w = WalWriter::create(&storage, dir.path(), 1, 0).unwrap();
    let mut rec = Vec::new();
    encode(true, 1, b"single", b"v", &mut rec);
    let whole = rec.len();
    let batch: Vec<(&[u8], Option<&[u8]>)> =
        vec![(b"a", Some(b"1")), (b"b", None), (b"c", Some(b"3"))];
    encode_batch(2, &batch, &mut rec);
    w.append(&rec).unwrap();
    w.sync().unwrap();
    let recs = tail_rule(dir.path(), true).unwrap();
    let seen: Vec<String> = recs
        .iter()
        .map(|r| format!("{} {:?} {:?}", r.seq, r.key, r.value))
        .collect();
    let want =
        |seq: u64, k: &[u8], v: Option<&[u8]>| format!("{seq} {k:?} {:?}", v.map(<[u8]>::to_vec));
    assert_eq!(
        seen,
        vec![
            want(1, b"single", Some(b"v")),
            want(2, b"a", Some(b"1")),
            want(3, b"b", None),
            want(4, b"c", Some(b"3"))
        ]
    );
    // cut anywhere inside the batch: none of it comes back
    let path = segment_path(dir.path(), 1);
    for cut in whole + 1..rec.len() {
        std::fs::write(&path, &rec[..cut]).unwrap();
        let recs = tail_rule(dir.path(), true).unwrap();
        assert_eq!(recs.len(), 1, "cut at {cut}");
    }
}

/// A segment of `n` records of 300-byte values as the engine writes it: each group of records starts with a
/// sync mark when an fsync has reached further; the log is fsynced after the records in `syncs`. Returns
/// the bytes and where each record starts.
fn marked_log(dir: &Path, n: u64, syncs: &[u64]) -> (Vec<u8>, Vec<usize>) {
    let mut w = WalWriter::create(&Storage::default(), dir, 1, 0).unwrap();
    let (mut synced, mut starts) = (0, Vec::new());
    for i in 0..n {
        let mut buf = Vec::new();
        w.mark(synced, &mut buf);
        starts.push(w.lsn as usize + buf.len());
        encode(true, i, format!("k{i}").as_bytes(), &[9u8; 300], &mut buf);
        w.append(&buf).unwrap();
        if syncs.contains(&i) {
            w.sync().unwrap();
            synced = w.lsn;
        }
    }
    (std::fs::read(segment_path(dir, 1)).unwrap(), starts)
}

fn point_in_time(dir: &Path, bytes: &[u8]) -> Result<Vec<Record>> {
    std::fs::write(segment_path(dir, 1), bytes).unwrap();
    replay(&Storage::default(), dir, 1, true, WalRecovery::PointInTime)
}

#[test]
fn point_in_time_cuts_at_damage_no_mark_proves_durable() {
    let dir = tempfile::tempdir().unwrap();
    // durable through record 2; records 3.. appended after, the first of them behind a mark
    let (bytes, starts) = marked_log(dir.path(), 6, &[2]);
    assert_eq!(point_in_time(dir.path(), &bytes).unwrap().len(), 6);
    // a flipped byte, a hole of zeros, a stretch of garbage in record 4, record 5 whole after it: the
    // log ends before record 4
    for (what, fill) in [
        ("flip", None),
        ("zeros", Some(0u8)),
        ("garbage", Some(0xab)),
    ] {
        let mut bad = bytes.clone();
        match fill {
            None => bad[starts[4] + 20] ^= 1,
            Some(b) => bad[starts[4] + 10..starts[4] + 200].fill(b),
        }
        let recs = point_in_time(dir.path(), &bad).unwrap();
        assert_eq!(recs.len(), 4, "{what}");
        let len = std::fs::metadata(segment_path(dir.path(), 1))
            .unwrap()
            .len();
        assert_eq!(
            len as usize, starts[4],
            "{what}: cut where the damage starts"
        );
    }
    // the same damage in record 1, which the mark before record 3 says was durable: corruption
    let mut bad = bytes.clone();
    bad[starts[1] + 20] ^= 1;
    assert!(matches!(
        point_in_time(dir.path(), &bad),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn point_in_time_finds_the_proof_past_garbage() {
    let dir = tempfile::tempdir().unwrap();
    // fsynced after records 2 and 4: record 5's mark says record 4 is durable
    let (bytes, starts) = marked_log(dir.path(), 6, &[2, 4]);
    let mut bad = bytes.clone();
    bad[starts[4] + 5..starts[4] + 250].fill(0xcd);
    assert!(matches!(
        point_in_time(dir.path(), &bad),
        Err(Error::Corruption { .. })
    ));
    // damage in record 5 itself, which nothing after proves: cut there
    let mut bad = bytes.clone();
    let last = bad.len() - 30;
    bad[last] ^= 1;
    assert_eq!(point_in_time(dir.path(), &bad).unwrap().len(), 5);
}

#[test]
fn absolute_consistency_refuses_even_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, _) = marked_log(dir.path(), 4, &[1]);
    let path = segment_path(dir.path(), 1);
    let absolute = || {
        replay(
            &Storage::default(),
            dir.path(),
            1,
            true,
            WalRecovery::AbsoluteConsistency,
        )
    };
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(absolute().unwrap().len(), 4);
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    assert!(matches!(absolute(), Err(Error::Corruption { .. })));
    // and a segment that is not the last is whole in every mode
    for mode in [
        WalRecovery::PointInTime,
        WalRecovery::TolerateCorruptedTailRecords,
    ] {
        assert!(replay(&Storage::default(), dir.path(), 1, false, mode).is_err());
    }
}

#[test]
fn a_recovery_mode_is_found_again_by_its_name() {
    for m in [
        WalRecovery::AbsoluteConsistency,
        WalRecovery::TolerateCorruptedTailRecords,
        WalRecovery::PointInTime,
    ] {
        assert_eq!(WalRecovery::from_name(m.name()), Some(m));
    }
    assert_eq!(WalRecovery::from_name("lenient"), None);
}

#[test]
fn marks_count_from_where_a_reopened_or_rotated_segment_starts() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::default();
    let (_, starts) = marked_log(dir.path(), 3, &[]);
    // reopened after the opening fsynced it: its first group's mark says all of it is durable
    let mut w = WalWriter::create(&storage, dir.path(), 1, 0).unwrap();
    let mut buf = Vec::new();
    w.mark(0, &mut buf);
    encode(true, 9, b"after", &[1; 300], &mut buf);
    w.append(&buf).unwrap();
    let mut bad = std::fs::read(segment_path(dir.path(), 1)).unwrap();
    bad[starts[1] + 20] ^= 1;
    assert!(matches!(
        point_in_time(dir.path(), &bad),
        Err(Error::Corruption { .. })
    ));
    // a segment rotated in at log position 5000: an fsync that reached 5000 + n says n of it is durable
    let mut w = WalWriter::create(&storage, dir.path(), 2, 5000).unwrap();
    let mut buf = Vec::new();
    encode(true, 10, b"x", &[2; 300], &mut buf);
    w.append(&buf).unwrap();
    w.sync().unwrap();
    let first = buf.len() as u64;
    let mut buf = Vec::new();
    w.mark(5000 + first, &mut buf);
    encode(true, 11, b"y", &[3; 300], &mut buf);
    w.append(&buf).unwrap();
    let path = segment_path(dir.path(), 2);
    let whole = std::fs::read(&path).unwrap();
    let replay2 = || replay(&storage, dir.path(), 2, true, WalRecovery::PointInTime);
    let mut bad = whole.clone();
    bad[30] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    assert!(matches!(replay2(), Err(Error::Corruption { .. })));
    // damage in the second record, which nothing proves durable: the log ends before it
    let mut bad = whole.clone();
    let last = bad.len() - 10;
    bad[last] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    assert_eq!(replay2().unwrap().len(), 1);
}

#[test]
fn a_mark_copied_into_a_value_or_from_another_segment_proves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&Storage::default(), dir.path(), 1, 0).unwrap();
    let mut first = Vec::new();
    encode(true, 1, b"a", &[5; 300], &mut first);
    w.append(&first).unwrap();
    // a value holding marks that claim everything before them durable: one of this segment at a made-up
    // offset, one of segment 2 at the very offset where it lands in the file (each fails one check only)
    let value_at = (first.len() + super::HEADER + 17 + 1) as u64;
    let mut value = Vec::new();
    encode_mark(1, 1 << 20, 1 << 19, &mut value);
    let second_at = value_at + value.len() as u64;
    encode_mark(2, second_at, second_at, &mut value);
    let mut rec = Vec::new();
    encode(true, 2, b"b", &value, &mut rec);
    w.append(&rec).unwrap();
    let bytes = std::fs::read(segment_path(dir.path(), 1)).unwrap();
    assert_eq!(point_in_time(dir.path(), &bytes).unwrap().len(), 2);
    // damage in the first record and in the second's header (so the proof's scan walks into the value): no
    // mark of this segment at its own offset proves the damage durable, so the log ends at the first
    let mut bad = bytes.clone();
    bad[20] ^= 1;
    bad[first.len() + 2] ^= 1;
    assert_eq!(point_in_time(dir.path(), &bad).unwrap().len(), 0);
}

#[test]
fn a_foreign_mark_at_a_record_boundary_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&Storage::default(), dir.path(), 1, 0).unwrap();
    let mut buf = Vec::new();
    encode(true, 1, b"a", &[5; 300], &mut buf);
    // a stale block of segment 9 where this segment's next record would be, whole records after it
    let at = buf.len() as u64;
    encode_mark(9, at, at, &mut buf);
    encode(true, 2, b"b", &[6; 300], &mut buf);
    w.append(&buf).unwrap();
    let bytes = std::fs::read(segment_path(dir.path(), 1)).unwrap();
    assert_eq!(point_in_time(dir.path(), &bytes).unwrap().len(), 1);
    std::fs::write(segment_path(dir.path(), 1), &bytes).unwrap();
    assert!(matches!(
        tail_rule(dir.path(), true),
        Err(Error::Corruption { .. })
    ));
}
