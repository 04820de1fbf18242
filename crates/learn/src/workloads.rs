//! The workloads of a repository and the targets held out of it.
//!
//! RTune measures 16 basic workloads (its Table 1): random reads and writes at 90/10, 50/50 and 10/90, and
//! update-random (db_bench's read-modify-write of a random key), each at four value sizes with the data's bytes
//! kept equal. Ours are the same mixes on the YCSB harness at `records` records of 1 KiB (fewer records for
//! larger values, more for smaller), uniform keys as db_bench's random ones. The targets a tuner is judged on
//! never enter the repository: YCSB A, B and F (zipfian, 1,000-byte values) and two mixes at value sizes no
//! basic workload has, as RTune's targets 16-21 are.

use cosine_ycsb::{CoreWorkload, Distribution};

/// Value sizes of the basic workloads, bytes.
pub const BASIC_VALUE_BYTES: [u32; 4] = [256, 1024, 4096, 16384];

/// A mix of random reads and writes (`read` of every operation a read, the rest blind updates), or
/// read-modify-writes only (`read = None`), over uniform keys with values of `value_bytes`, at the record count
/// that keeps the data as large as `records` records of 1 KiB.
pub fn mix(read: Option<f64>, value_bytes: u32, records: u64, ops: u64) -> CoreWorkload {
    let size = if value_bytes >= 1024 {
        format!("{}k", value_bytes / 1024)
    } else {
        format!("{value_bytes}b")
    };
    let name = match read {
        Some(r) => format!("rw{:02}-{size}", (r * 100.0).round() as u32),
        None => format!("upd-{size}"),
    };
    let mut w = CoreWorkload::defaults(&name);
    w.field_count = 1;
    w.field_length = value_bytes;
    w.record_count = (records * 1024 / value_bytes as u64).max(100);
    w.operation_count = ops;
    w.distribution = Distribution::Uniform;
    match read {
        Some(r) => {
            w.read = r;
            w.update = 1.0 - r;
        }
        None => {
            w.read = 0.0;
            w.update = 0.0;
        }
    }
    w.read_modify_write = if read.is_none() { 1.0 } else { 0.0 };
    w
}

/// The 16 basic workloads: reads 90, 50 and 10% and update-random, at each of [`BASIC_VALUE_BYTES`].
pub fn basic(records: u64, ops: u64) -> Vec<CoreWorkload> {
    let mut out = Vec::new();
    for v in BASIC_VALUE_BYTES {
        for r in [Some(0.9), Some(0.5), Some(0.1), None] {
            out.push(mix(r, v, records, ops));
        }
    }
    out
}

/// The held-out targets: YCSB A, B and F at `records` records, and random mixes of 70 and 30% reads at value
/// sizes no basic workload has (2 and 8 KiB).
pub fn targets(records: u64, ops: u64) -> Vec<CoreWorkload> {
    let mut out = Vec::new();
    for n in ["ycsb-a", "ycsb-b", "ycsb-f"] {
        let mut w = CoreWorkload::named(n).expect("a YCSB core workload");
        w.record_count = records;
        w.operation_count = ops;
        out.push(w);
    }
    out.push(mix(Some(0.7), 2048, records, ops));
    out.push(mix(Some(0.3), 8192, records, ops));
    out
}

/// A workload by name: a basic one, a target, or any YCSB core workload, at `records` and `ops`.
pub fn by_name(name: &str, records: u64, ops: u64) -> Option<CoreWorkload> {
    basic(records, ops)
        .into_iter()
        .chain(targets(records, ops))
        .find(|w| w.name == name)
        .or_else(|| {
            CoreWorkload::named(name).map(|mut w| {
                w.record_count = records;
                w.operation_count = ops;
                w
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_basic_workloads_and_no_target_among_them() {
        let b = basic(10_000, 1_000);
        assert_eq!(b.len(), 16);
        let names: Vec<_> = b.iter().map(|w| w.name.clone()).collect();
        assert!(names.contains(&"rw90-1k".to_string()));
        assert!(names.contains(&"upd-16k".to_string()));
        for w in &b {
            w.validate().unwrap();
            // the data's bytes are the same at every value size
            let bytes = w.record_count * w.value_bytes() as u64;
            assert_eq!(bytes, 10_000 * 1024, "{}", w.name);
        }
        for t in targets(10_000, 1_000) {
            t.validate().unwrap();
            assert!(
                !names.contains(&t.name),
                "target {} is a basic workload",
                t.name
            );
        }
        assert_eq!(by_name("rw30-8k", 10_000, 5).unwrap().value_bytes(), 8192);
        assert_eq!(by_name("ycsb-d", 10_000, 5).unwrap().record_count, 10_000);
        assert!(by_name("nope", 1, 1).is_none());
    }
}
