//! What the harness reads from the OS about an engine it runs, the same for every engine: the process's I/O
//! counters (/proc/self/io), the block device's (`/sys/dev/block`), and the waits that settle an engine with no
//! API reporting its background work.

use cosine_ycsb::{IoCounters, StoreResult};

/// /proc/self/io as I/O counters.
pub fn proc_io() -> Option<IoCounters> {
    let s = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(IoCounters {
        reads: field("read_bytes:")? / 4096,
        background: field("write_bytes:")? / 4096,
    })
}

/// Bytes this process has read from storage (`read_bytes` of /proc/self/io; page-cache hits do not count).
pub fn proc_io_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/io").ok()?;
    s.lines()
        .find(|l| l.starts_with("read_bytes:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// The counters of the block device a directory lives on (`/sys/dev/block/MAJOR:MINOR/stat`): requests
/// completed (after the I/O scheduler merged neighbours), the sectors they moved and the milliseconds they
/// took, reads and writes. Device-wide: every process's I/O counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceStats {
    /// Read requests completed.
    pub reads: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Milliseconds read requests took (summed over requests, so overlapping ones count each).
    pub read_ms: u64,
    /// Write requests completed.
    pub writes: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
    /// Milliseconds write requests took.
    pub write_ms: u64,
}

impl DeviceStats {
    /// The counters of the device `dir` is on; `None` for a file system without one (tmpfs, overlay) or off
    /// Linux.
    pub fn of(dir: &std::path::Path) -> Option<DeviceStats> {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(dir).ok()?.dev();
        // glibc's major()/minor() split of a dev_t
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
        Self::parse(&std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/stat")).ok()?)
    }

    /// The fields of a block device's `stat` file: reads completed (1st), sectors read (3rd), read ms (4th),
    /// writes completed (5th), sectors written (7th), write ms (8th).
    fn parse(stat: &str) -> Option<DeviceStats> {
        let f: Vec<u64> = stat
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        Some(DeviceStats {
            reads: *f.first()?,
            read_sectors: *f.get(2)?,
            read_ms: *f.get(3)?,
            writes: *f.get(4)?,
            write_sectors: *f.get(6)?,
            write_ms: *f.get(7)?,
        })
    }

    /// What the device did between `self` (earlier) and `later`, per one of `ops` operations: read and write
    /// requests and KiB per operation and the mean time of one request (µs; null without requests).
    pub fn since(&self, later: &DeviceStats, ops: u64) -> serde_json::Value {
        let (reads, writes) = (
            later.reads.saturating_sub(self.reads),
            later.writes.saturating_sub(self.writes),
        );
        let each = |ms: u64, n: u64| (n > 0).then(|| ms as f64 * 1000.0 / n as f64);
        let per_op = |n: u64| n as f64 / ops.max(1) as f64;
        let kib = |sectors: u64| per_op(sectors) / 2.0;
        serde_json::json!({
            "reads_per_op": per_op(reads),
            "read_kib_per_op": kib(later.read_sectors.saturating_sub(self.read_sectors)),
            "read_us_each": each(later.read_ms.saturating_sub(self.read_ms), reads),
            "writes_per_op": per_op(writes),
            "write_kib_per_op": kib(later.write_sectors.saturating_sub(self.write_sectors)),
            "write_us_each": each(later.write_ms.saturating_sub(self.write_ms), writes),
        })
    }
}

/// Polls `idle` every `every` until it has answered true `times` times in a row (a finished compaction may
/// schedule the next), for at most 600 s: how the harness settles an engine before the timed run.
pub fn wait_until_idle(
    what: &str,
    every: std::time::Duration,
    times: u32,
    mut idle: impl FnMut() -> StoreResult<bool>,
) -> StoreResult<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let mut quiet = 0;
    while quiet < times {
        if std::time::Instant::now() > deadline {
            return Err(format!("{what}: background work still running after 600 s").into());
        }
        std::thread::sleep(every);
        quiet = if idle()? { quiet + 1 } else { 0 };
    }
    Ok(())
}

/// Waits until this process has written less than 64 KiB to storage in each of two consecutive half-second
/// windows: how the harness settles an engine that has no API reporting pending work.
pub fn quiet_wait() -> StoreResult<()> {
    let written = || proc_io().map_or(0, |c| c.background);
    let mut last = written();
    wait_until_idle("writes", std::time::Duration::from_millis(500), 2, || {
        let now = written();
        // /proc/self/io counts 4 KiB units here
        let quiet = now.saturating_sub(last) < 16;
        last = now;
        Ok(quiet)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_device_s_counters_are_read_and_differenced() {
        let before = DeviceStats::parse(
            "31078540    84354 2648591792  8085510 24895768   469468 2187097272 18430799        0  3578108 27009516",
        )
        .unwrap();
        assert_eq!(
            (before.reads, before.read_sectors, before.read_ms),
            (31078540, 2648591792, 8085510)
        );
        assert_eq!(
            (before.writes, before.write_sectors, before.write_ms),
            (24895768, 2187097272, 18430799)
        );
        let after = DeviceStats {
            reads: before.reads + 3000,
            read_sectors: before.read_sectors + 48_000,
            read_ms: before.read_ms + 600,
            ..before
        };
        let d = before.since(&after, 1000);
        assert_eq!(d["reads_per_op"], 3.0);
        assert_eq!(d["read_us_each"], 200.0);
        assert_eq!(d["read_kib_per_op"], 24.0);
        assert_eq!(d["writes_per_op"], 0.0);
        assert!(d["write_us_each"].is_null());
        assert!(DeviceStats::parse("12 x").is_none());
        // the machine's own device, where it has one: a directory on it reads its counters
        if let Some(s) = DeviceStats::of(&std::env::temp_dir()) {
            assert!(s.reads > 0 || s.writes > 0);
        }
    }
}
