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
    /// Share of the random reads the operating system's page cache answers (memory the design leaves unused
    /// and the system keeps for files): they cost neither a device request nor its latency.
    #[serde(default)]
    pub cached_share: f64,
    /// Runs whose filter, fences or hash index the operation consults in memory ([`crate::probes::Probes`]):
    /// CPU that grows with the runs a design keeps.
    #[serde(default)]
    pub run_probes: f64,
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
            cached_share: 0.0,
            run_probes: (m.lookup + m.rmw) * cost.probes.lookup
                + m.empty_lookup * cost.probes.empty_lookup,
        }
    }

    /// Random reads that reach the device: those the page cache does not answer.
    pub fn device_reads(&self) -> f64 {
        self.random_reads * (1.0 - self.cached_share.clamp(0.0, 1.0))
    }

    /// Blocks an operation reads and writes: what the I/O model counts.
    pub fn blocks(&self) -> f64 {
        self.random_reads + self.sequential_blocks
    }

    /// Requests the volume serves for one operation: each random read the page cache does not answer, and the
    /// sequential bytes (blocks and log) in requests of [`SEQUENTIAL_REQUEST_BYTES`].
    pub fn requests(&self) -> f64 {
        self.device_reads()
            + (self.sequential_blocks * self.block_bytes + self.log_bytes)
                / SEQUENTIAL_REQUEST_BYTES
    }

    /// Bytes the volume moves for one operation (the page cache's answers move none).
    pub fn bytes(&self) -> f64 {
        (self.device_reads() + self.sequential_blocks) * self.block_bytes + self.log_bytes
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

/// The share of a design's random block reads the page cache answers when it holds `page_cache_bytes` of
/// `block_bytes` blocks: an LRU cache over the blocks the reads touch, each block good for the one key that
/// brought it in (keys are spread over blocks), so `page_cache_bytes / block_bytes` keys, by Che's
/// approximation over the read distribution ([`crate::keys::cache_hit_chances`]); the design's own entry cache
/// (`entry_cache_entries` keys) answers the hottest first, and the page cache a share of the rest. `entries`
/// bounds a uniform read universe to the stored keys.
pub fn page_cache_share(
    parts: &[crate::keys::KeyPart],
    entries: f64,
    entry_cache_entries: f64,
    page_cache_bytes: f64,
    block_bytes: f64,
) -> f64 {
    let blocks = page_cache_bytes / block_bytes.max(1.0);
    if !(blocks >= 1.0) {
        return 0.0;
    }
    let clamped;
    let parts = if let [one] = parts {
        clamped = [crate::keys::KeyPart::new(
            one.universe.min(entries.max(1.0)),
            one.put,
            one.get,
            one.alpha,
        )];
        &clamped[..]
    } else {
        parts
    };
    let reads: f64 = parts.iter().map(|p| p.get).sum();
    if !(reads > 0.0) {
        return 0.0;
    }
    let hit = |n: f64| {
        crate::keys::cache_hit_chances(parts, n, 1.0, 0.0)
            .iter()
            .zip(parts)
            .map(|(h, p)| h * p.get)
            .sum::<f64>()
            / reads
    };
    let before = if entry_cache_entries >= 1.0 {
        hit(entry_cache_entries)
    } else {
        0.0
    };
    let after = hit(entry_cache_entries.max(0.0) + blocks);
    if before >= 1.0 {
        return 0.0;
    }
    ((after - before) / (1.0 - before)).clamp(0.0, 1.0)
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
    fn the_page_cache_answers_more_reads_the_more_it_holds_and_more_under_skew() {
        use crate::keys::KeySpace;
        let mut w = named_workload("ycsb-c").unwrap();
        w.entries = 2_000_000;
        let zipf = KeySpace::from_workload(&w).parts();
        let mut u = w.clone();
        u.reads = cosine_design::KeyDistribution::uniform();
        let uniform = KeySpace::from_workload(&u).parts();
        let at = |parts: &[crate::keys::KeyPart], mib: f64| {
            page_cache_share(parts, 2e6, 0.0, mib * 1048576.0, 4096.0)
        };
        assert_eq!(at(&zipf, 0.0), 0.0);
        assert!(at(&zipf, 16.0) < at(&zipf, 64.0) && at(&zipf, 64.0) < at(&zipf, 256.0));
        assert!(at(&zipf, 64.0) > at(&uniform, 64.0));
        // uniform reads: about the share of the stored keys the cache's blocks hold
        let share = at(&uniform, 64.0);
        assert!((share - 16384.0 / 2e6).abs() < 0.01, "{share}");
        // an entry cache takes the hottest keys first: the page cache answers less of what is left
        assert!(page_cache_share(&zipf, 2e6, 50_000.0, 64.0 * 1048576.0, 4096.0) < at(&zipf, 64.0));
    }

    #[test]
    fn scaling_keeps_the_split() {
        let io = OpIo {
            random_reads: 1.0,
            sequential_blocks: 3.0,
            block_bytes: 4096.0,
            log_bytes: 10.0,
            cached_share: 0.5,
            run_probes: 0.0,
        };
        assert_eq!(io.device_reads(), 0.5);
        let s = io.scaled_to(8.0);
        assert_eq!(
            (s.random_reads, s.sequential_blocks, s.log_bytes),
            (2.0, 6.0, 10.0)
        );
        assert_eq!(OpIo::default().scaled_to(5.0), OpIo::default());
    }
}
