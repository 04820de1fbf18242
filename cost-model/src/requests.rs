//! What one operation asks of a volume: the block reads it waits for (a lookup's blocks, a scan's seeks), the
//! blocks its flushes, compactions and scans move in sequential streams, and the bytes it appends to the log.
//! The I/O model counts blocks (Eq. 1); a volume counts requests and bytes, and serves a sequential stream in
//! requests of up to [`SEQUENTIAL_REQUEST_BYTES`].

use crate::IoCost;
use cosine_design::Workload;
use serde::{Deserialize, Serialize};

/// Bytes one request of a sequential stream moves at most, and what a volume counts as one I/O: a flush, a
/// compaction, a scan's run of blocks and the log are written and read in requests this large (the kernel
/// merges a stream's pages; AWS counts an SSD volume's I/O of up to 256 KiB as one).
pub const SEQUENTIAL_REQUEST_BYTES: f64 = 256.0 * 1024.0;

/// One operation of a workload's mix, as a volume sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpIo {
    /// Blocks read one request each, which the operation waits for: a lookup's blocks, a read-modify-write's
    /// lookup, a scan's seeks.
    pub random_reads: f64,
    /// Blocks moved in sequential streams: a write's share of flushes and compactions (read and written), a
    /// scan's blocks after its seeks.
    pub sequential_blocks: f64,
    /// Bytes of one block.
    pub block_bytes: f64,
    /// Bytes appended to the write-ahead log.
    pub log_bytes: f64,
}

impl OpIo {
    /// One operation of `workload`'s mix on a design of `block_bytes` blocks priced `cost` by the I/O model,
    /// each write appending a log record of `log_record_bytes`: lookups and empty lookups read randomly, a
    /// read-modify-write its lookup; inserts and blind updates (and a read-modify-write's write) move their
    /// flush and compaction blocks sequentially; a scan seeks into each run it meets and reads the rest in
    /// sequence.
    pub fn of(cost: &IoCost, workload: &Workload, block_bytes: u64, log_record_bytes: f64) -> Self {
        let m = &workload.mix;
        let p = &cost.per_op;
        // (a short scan is one seek into every run: the random part of any scan)
        let seeks = p.short_scan.min(cost.scan);
        OpIo {
            random_reads: (m.lookup + m.rmw) * p.lookup
                + m.empty_lookup * p.empty_lookup
                + m.scan * seeks,
            sequential_blocks: m.insert * p.insert
                + m.blind_update * p.blind_update
                + m.rmw * (p.rmw - p.lookup).max(0.0)
                + m.scan * (cost.scan - seeks),
            block_bytes: block_bytes as f64,
            log_bytes: (m.insert + m.blind_update + m.rmw) * log_record_bytes,
        }
    }

    /// Blocks an operation reads and writes: what the I/O model counts.
    pub fn blocks(&self) -> f64 {
        self.random_reads + self.sequential_blocks
    }

    /// Requests the volume serves for one operation: each random read, and the sequential bytes (blocks and
    /// log) in requests of [`SEQUENTIAL_REQUEST_BYTES`].
    pub fn requests(&self) -> f64 {
        self.random_reads
            + (self.sequential_blocks * self.block_bytes + self.log_bytes)
                / SEQUENTIAL_REQUEST_BYTES
    }

    /// Bytes the volume moves for one operation.
    pub fn bytes(&self) -> f64 {
        self.blocks() * self.block_bytes + self.log_bytes
    }

    /// The same operation with its blocks scaled to `blocks` in all, random and sequential in the same
    /// proportion (a robust tuning's worst case over the workload's neighbourhood, which the search knows as a
    /// total only).
    pub fn scaled_to(self, blocks: f64) -> Self {
        let now = self.blocks();
        if !(now > 0.0) || !blocks.is_finite() {
            return self;
        }
        let k = blocks / now;
        OpIo {
            random_reads: self.random_reads * k,
            sequential_blocks: self.sequential_blocks * k,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DistributionAware, IoModel};
    use cosine_design::{named_workload, Design};

    #[test]
    fn the_requests_split_the_blocks_the_model_counts() {
        let d = Design::rocksdb_like(64 << 20, 100 << 20, 40 << 20);
        for name in ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"] {
            let mut w = named_workload(name).unwrap();
            w.entries = 10_000_000;
            let cost = DistributionAware::new().evaluate(&d, &w).unwrap();
            let io = OpIo::of(&cost, &w, d.block_bytes, 1053.0);
            assert!(
                (io.blocks() - cost.per_operation).abs() <= 1e-9 * cost.per_operation.max(1.0),
                "{name}: {} vs {}",
                io.blocks(),
                cost.per_operation
            );
            assert!(
                io.random_reads >= 0.0 && io.sequential_blocks >= 0.0,
                "{name}"
            );
            // sequential streams take fewer requests than blocks; each random read is one
            assert!(io.requests() <= io.blocks() + io.log_bytes / SEQUENTIAL_REQUEST_BYTES + 1e-12);
            assert!(io.requests() >= io.random_reads);
        }
        // C reads only; E's scans are mostly sequential
        let mut c = named_workload("ycsb-c").unwrap();
        c.entries = 10_000_000;
        let io = OpIo::of(
            &DistributionAware::new().evaluate(&d, &c).unwrap(),
            &c,
            d.block_bytes,
            1053.0,
        );
        assert_eq!((io.sequential_blocks, io.log_bytes), (0.0, 0.0));
    }

    #[test]
    fn scaling_keeps_the_split() {
        let io = OpIo {
            random_reads: 1.0,
            sequential_blocks: 3.0,
            block_bytes: 4096.0,
            log_bytes: 10.0,
        };
        let s = io.scaled_to(8.0);
        assert_eq!(
            (s.random_reads, s.sequential_blocks, s.log_bytes),
            (2.0, 6.0, 10.0)
        );
        assert_eq!(OpIo::default().scaled_to(5.0), OpIo::default());
    }
}
