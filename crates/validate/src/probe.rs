//! What this machine is, measured (`cosine profile`): its cores and memory (or its memory cgroup's limit),
//! and its disk: random reads of a block at queue depths 1 to 32 (as many threads, each waiting on one read:
//! how the engine reads) with O_DIRECT, so the page cache answers none of them; sequential write and read
//! bandwidth; an fsync's latency; and the CPU one read costs, from the device and from the page cache.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Cores and memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    /// Cores the process may run on.
    pub cores: u32,
    /// Memory the process may use: its memory cgroup's limit where one is set below the machine's, else the
    /// machine's.
    pub memory_bytes: u64,
    /// Whether `memory_bytes` is a cgroup's limit (the operating system then lives outside it).
    pub cgroup_limited: bool,
}

/// This machine's cores and memory.
pub fn host() -> Host {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024);
    let limit = cgroup_limit();
    match limit {
        Some(l) if l < total => Host {
            cores,
            memory_bytes: l,
            cgroup_limited: true,
        },
        _ => Host {
            cores,
            memory_bytes: total,
            cgroup_limited: false,
        },
    }
}

/// The memory limit of the cgroup this process is in (v2 `memory.max`, v1 `memory.limit_in_bytes`), where one
/// is set.
fn cgroup_limit() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let file = if controllers.is_empty() {
            format!("/sys/fs/cgroup{path}/memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
        } else {
            continue;
        };
        if let Ok(text) = std::fs::read_to_string(&file) {
            if let Ok(n) = text.trim().parse::<u64>() {
                return Some(n);
            }
        }
    }
    None
}

/// What to measure of a disk.
#[derive(Clone, Debug)]
pub struct DiskProbe {
    /// Directory on the disk to measure (a file is made in it and removed).
    pub dir: PathBuf,
    /// Bytes of the test file.
    pub file_bytes: u64,
    /// Bytes of one random read.
    pub block_bytes: u64,
    /// Queue depths (threads each waiting on one read) to measure.
    pub depths: Vec<usize>,
    /// Time each depth runs.
    pub per_depth: Duration,
    /// fsyncs timed.
    pub fsyncs: usize,
}

/// One queue depth's random reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthPoint {
    /// Reads in flight.
    pub depth: usize,
    /// Reads a second.
    pub iops: f64,
    /// Mean microseconds a read took.
    pub latency_us: f64,
}

/// What the disk gave.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskProfile {
    /// Whether the reads bypassed the page cache (O_DIRECT); false where the file system refused it and the
    /// probe read through the cache, dropped before each depth.
    pub direct: bool,
    /// Per queue depth.
    pub depths: Vec<DepthPoint>,
    /// Sequential writes, MiB a second (1 MiB requests, synced at the end).
    pub write_mibps: f64,
    /// Sequential reads, MiB a second.
    pub read_mibps: f64,
    /// Median microseconds of a 4 KiB append and its fdatasync.
    pub fsync_us: f64,
    /// CPU microseconds a random read from the device costs the process (its system call, the block layer,
    /// the copy).
    pub device_read_cpu_us: f64,
    /// CPU microseconds the same read costs when the page cache holds the block.
    pub cached_read_cpu_us: f64,
    /// CPU microseconds a read through the page cache costs when it misses (the engine's reads are buffered):
    /// the page's allocation, the device request, the copy; and, where a memory cgroup could be made, the
    /// reclaim of another page, as when the data outgrows the memory (else the page dropped after each read).
    pub buffered_miss_cpu_us: f64,
    /// Whether `buffered_miss_cpu_us` was measured with the page cache full (in a memory cgroup).
    pub miss_under_pressure: bool,
    /// What could not be measured as asked.
    pub warnings: Vec<String>,
}

impl DiskProfile {
    /// The most reads a second any depth gave.
    pub fn iops(&self) -> f64 {
        self.depths.iter().map(|d| d.iops).fold(0.0, f64::max)
    }

    /// Microseconds of one read at depth 1.
    pub fn read_latency_us(&self) -> f64 {
        self.latency_at(1)
    }

    /// Microseconds a read waits beyond its own CPU with `depth` reads in flight: the latency measured from the
    /// process ([`DiskProfile::latency_at`]) holds the CPU the read's system call spends in the kernel, which
    /// the CPU library charges apart (`read_us`), so pricing both would count it twice. At least a tenth of the
    /// latency.
    pub fn wait_at(&self, depth: usize) -> f64 {
        let latency = self.latency_at(depth);
        (latency - self.device_read_cpu_us).max(0.1 * latency)
    }

    /// Microseconds of one read with `depth` reads in flight: the measured depth at or just below it.
    pub fn latency_at(&self, depth: usize) -> f64 {
        self.depths
            .iter()
            .filter(|d| d.depth <= depth.max(1))
            .max_by_key(|d| d.depth)
            .or(self.depths.first())
            .map_or(0.0, |d| d.latency_us)
    }
}

const ALIGN: usize = 4096;

/// A buffer of `len` bytes aligned for O_DIRECT, inside `backing`.
fn aligned(backing: &mut Vec<u8>, len: usize) -> &mut [u8] {
    backing.resize(len + ALIGN, 0);
    let off = backing.as_ptr().align_offset(ALIGN);
    &mut backing[off..off + len]
}

fn open_direct(path: &Path, write: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .create(write)
        .truncate(write)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

/// Drops the file's pages from the page cache (the fallback without O_DIRECT).
fn drop_cache(file: &File) {
    use std::os::unix::io::AsRawFd;
    let _ = file.sync_all();
    // SAFETY: posix_fadvise only reads its arguments; the descriptor is open for the call's duration.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

fn cpu_s() -> f64 {
    cosine_ycsb::cpu_seconds().map_or(0.0, |(u, s)| u + s)
}

/// A pseudo-random block index (splitmix64 of a counter): no dependency, no shared state between threads.
fn block_at(seed: u64, blocks: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % blocks.max(1)
}

/// Random reads of `block` bytes at `depth` threads for `time`: (reads, seconds, summed read seconds).
fn random_reads(
    file: &File,
    blocks: u64,
    block: usize,
    depth: usize,
    time: Duration,
) -> (u64, f64, f64) {
    let started = Instant::now();
    let results: Vec<(u64, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..depth)
            .map(|t| {
                s.spawn(move || {
                    let mut backing = Vec::new();
                    let buf = aligned(&mut backing, block);
                    let (mut n, mut busy) = (0u64, 0.0);
                    let mut i = (t as u64) << 40;
                    while started.elapsed() < time {
                        let at = block_at(i, blocks) * block as u64;
                        i += 1;
                        let t0 = Instant::now();
                        if file.read_exact_at(buf, at).is_err() {
                            break;
                        }
                        busy += t0.elapsed().as_secs_f64();
                        n += 1;
                    }
                    (n, busy)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let n = results.iter().map(|r| r.0).sum();
    let busy = results.iter().map(|r| r.1).sum();
    (n, started.elapsed().as_secs_f64(), busy)
}

/// Measures the disk `probe.dir` lies on.
pub fn disk(probe: &DiskProbe) -> std::io::Result<DiskProfile> {
    std::fs::create_dir_all(&probe.dir)?;
    let path = probe
        .dir
        .join(format!("cosine-profile-{}.bin", std::process::id()));
    let result = measure(probe, &path);
    let _ = std::fs::remove_file(&path);
    result
}

fn measure(probe: &DiskProbe, path: &Path) -> std::io::Result<DiskProfile> {
    let mut warnings = Vec::new();
    let chunk = 1 << 20;
    let file_bytes = probe.file_bytes.max(chunk as u64) / chunk as u64 * chunk as u64;
    let block = (probe.block_bytes as usize).max(512);
    // sequential writes, synced
    let (file, direct) = match open_direct(path, true) {
        Ok(f) => (f, true),
        Err(e) => {
            warnings.push(format!(
                "O_DIRECT refused on {} ({e}): reads go through the page cache, dropped before each depth",
                probe.dir.display()
            ));
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)?;
            (f, false)
        }
    };
    let mut backing = Vec::new();
    let buf = aligned(&mut backing, chunk);
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i * 31 + 7) as u8;
    }
    let started = Instant::now();
    let mut at = 0u64;
    while at < file_bytes {
        file.write_all_at(buf, at)?;
        at += chunk as u64;
    }
    file.sync_data()?;
    let write_mibps = file_bytes as f64 / (1 << 20) as f64 / started.elapsed().as_secs_f64();
    // sequential reads
    if !direct {
        drop_cache(&file);
    }
    let started = Instant::now();
    let mut at = 0u64;
    while at < file_bytes {
        file.read_exact_at(buf, at)?;
        at += chunk as u64;
    }
    let read_mibps = file_bytes as f64 / (1 << 20) as f64 / started.elapsed().as_secs_f64();
    // random reads at each depth; the CPU of the depth-1 reads
    let blocks = file_bytes / block as u64;
    let mut depths = Vec::new();
    let mut device_read_cpu_us = 0.0;
    for &depth in &probe.depths {
        if !direct {
            drop_cache(&file);
        }
        let cpu0 = cpu_s();
        let (n, seconds, busy) = random_reads(&file, blocks, block, depth.max(1), probe.per_depth);
        let cpu = cpu_s() - cpu0;
        if n == 0 {
            warnings.push(format!("no read completed at depth {depth}"));
            continue;
        }
        if depth == 1 {
            device_read_cpu_us = cpu / n as f64 * 1e6;
        }
        depths.push(DepthPoint {
            depth,
            iops: n as f64 / seconds,
            latency_us: busy / n as f64 * 1e6,
        });
    }
    drop(file);
    // the same reads from the page cache: a small file read through it, twice over
    let cached = OpenOptions::new().read(true).open(path)?;
    let small = blocks.clamp(1, 4096);
    let mut plain = vec![0u8; block];
    for b in 0..small {
        cached.read_exact_at(&mut plain, b * block as u64)?;
    }
    let reads = 200_000u64;
    let cpu0 = cpu_s();
    for i in 0..reads {
        cached.read_exact_at(&mut plain, block_at(i, small) * block as u64)?;
    }
    let cached_read_cpu_us = (cpu_s() - cpu0) / reads as f64 * 1e6;
    // and as the engine reads a block the page cache does not hold: through the cache, without read-ahead,
    // the page dropped after each read (so every read misses), one thread
    let (buffered_miss_cpu_us, miss_under_pressure) = match pressured_misses(
        &cached,
        blocks,
        block,
        probe.per_depth,
        cached_read_cpu_us,
    ) {
        Some(us) => (us, true),
        None => {
            warnings.push(
                    "no memory cgroup could be made: a buffered miss measured with its page dropped, without the reclaim a full page cache adds".into(),
                );
            (
                buffered_misses(&cached, blocks, block, probe.per_depth)?,
                false,
            )
        }
    };
    // fsync latency: a 4 KiB append and its fdatasync
    let log_path = path.with_extension("log");
    let mut log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)?;
    let mut syncs = Vec::with_capacity(probe.fsyncs);
    let page = [0x5au8; 4096];
    for _ in 0..probe.fsyncs.max(1) {
        let t0 = Instant::now();
        log.write_all(&page)?;
        log.sync_data()?;
        syncs.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    drop(log);
    let _ = std::fs::remove_file(&log_path);
    syncs.sort_by(f64::total_cmp);
    let fsync_us = syncs[syncs.len() / 2];
    if device_read_cpu_us == 0.0 {
        warnings.push("depth 1 was not measured: the CPU of a device read is unknown".into());
    }
    Ok(DiskProfile {
        direct,
        depths,
        write_mibps,
        read_mibps,
        fsync_us,
        device_read_cpu_us,
        cached_read_cpu_us,
        buffered_miss_cpu_us,
        miss_under_pressure,
        warnings,
    })
}

/// CPU microseconds of a buffered read that misses the page cache: random blocks read through the cache with
/// read-ahead off (`POSIX_FADV_RANDOM`), each block's pages dropped after the read (`POSIX_FADV_DONTNEED`, its
/// own small cost included), for `time`.
fn buffered_misses(file: &File, blocks: u64, block: usize, time: Duration) -> std::io::Result<f64> {
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    let advise = |offset: u64, len: u64, advice: i32| {
        // SAFETY: posix_fadvise only reads its arguments; the descriptor is open for the call's duration.
        unsafe { libc::posix_fadvise(fd, offset as libc::off_t, len as libc::off_t, advice) };
    };
    advise(0, 0, libc::POSIX_FADV_DONTNEED);
    advise(0, 0, libc::POSIX_FADV_RANDOM);
    let mut buf = vec![0u8; block];
    let started = Instant::now();
    let cpu0 = cpu_s();
    let mut n = 0u64;
    while started.elapsed() < time || n < 100 {
        let at = block_at(n + (1 << 50), blocks) * block as u64;
        file.read_exact_at(&mut buf, at)?;
        advise(at, block as u64, libc::POSIX_FADV_DONTNEED);
        n += 1;
    }
    Ok((cpu_s() - cpu0) / n as f64 * 1e6)
}

/// The memory cgroup [`pressured_misses`] reads in: small beside the file, so that nearly every read misses.
const PRESSURE_CGROUP_BYTES: u64 = 16 << 20;

/// CPU microseconds of a buffered read that misses a full page cache: the process moved into a memory cgroup
/// of [`PRESSURE_CGROUP_BYTES`], random blocks of the file read through the cache with read-ahead off until
/// the cgroup is full, then timed, each miss reclaiming a page as when the data outgrows the memory. The hits
/// (the cgroup's share of the file) are taken out at `cached_us` each. None where no memory cgroup can be made
/// (the process goes back to its own cgroup in every case).
fn pressured_misses(
    file: &File,
    blocks: u64,
    block: usize,
    time: Duration,
    cached_us: f64,
) -> Option<f64> {
    use crate::cgroup;
    use std::os::unix::io::AsRawFd;
    let file_bytes = blocks * block as u64;
    if file_bytes < 4 * PRESSURE_CGROUP_BYTES {
        return None;
    }
    let home = cgroup::current()?;
    let cg = cgroup::Cgroup::create("cosine-profile", PRESSURE_CGROUP_BYTES).ok()?;
    if cgroup::join(cg.path()).is_err() {
        cg.remove();
        return None;
    }
    let fd = file.as_raw_fd();
    // SAFETY: posix_fadvise only reads its arguments; the descriptor is open for the call's duration.
    unsafe {
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM);
    }
    let mut buf = vec![0u8; block];
    let measured = (|| -> std::io::Result<f64> {
        // fill the cgroup's page cache twice over, then time
        for i in 0..2 * PRESSURE_CGROUP_BYTES / block as u64 {
            file.read_exact_at(&mut buf, block_at(i + (1 << 51), blocks) * block as u64)?;
        }
        let started = Instant::now();
        let cpu0 = cpu_s();
        let mut n = 0u64;
        while started.elapsed() < time || n < 100 {
            file.read_exact_at(&mut buf, block_at(n + (1 << 52), blocks) * block as u64)?;
            n += 1;
        }
        Ok((cpu_s() - cpu0) / n as f64 * 1e6)
    })();
    let _ = cgroup::join(&home);
    cg.remove();
    let hit = PRESSURE_CGROUP_BYTES as f64 / file_bytes as f64;
    measured
        .ok()
        .map(|us| ((us - hit * cached_us) / (1.0 - hit)).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_cores_and_memory() {
        let h = host();
        assert!(h.cores >= 1 && h.memory_bytes > 64 << 20, "{h:?}");
    }

    #[test]
    fn a_small_disk_probe_measures_every_depth_and_removes_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = disk(&DiskProbe {
            dir: dir.path().to_path_buf(),
            file_bytes: 8 << 20,
            block_bytes: 4096,
            depths: vec![1, 4],
            per_depth: Duration::from_millis(150),
            fsyncs: 5,
        })
        .unwrap();
        assert_eq!(p.depths.len(), 2, "{p:?}");
        assert!(p.iops() > 0.0 && p.read_latency_us() > 0.0);
        assert!(p.write_mibps > 0.0 && p.read_mibps > 0.0 && p.fsync_us > 0.0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_reads_wait_is_its_latency_less_its_cpu() {
        let p = DiskProfile {
            direct: true,
            depths: vec![
                DepthPoint {
                    depth: 1,
                    iops: 9_600.0,
                    latency_us: 104.0,
                },
                DepthPoint {
                    depth: 2,
                    iops: 16_566.0,
                    latency_us: 120.6,
                },
                DepthPoint {
                    depth: 4,
                    iops: 21_118.0,
                    latency_us: 189.2,
                },
            ],
            write_mibps: 1_237.0,
            read_mibps: 1_113.0,
            fsync_us: 290.0,
            device_read_cpu_us: 47.9,
            cached_read_cpu_us: 1.15,
            buffered_miss_cpu_us: 48.6,
            miss_under_pressure: true,
            warnings: Vec::new(),
        };
        assert!((p.wait_at(2) - 72.7).abs() < 1e-9);
        assert!((p.wait_at(3) - 72.7).abs() < 1e-9, "the depth at or below");
        assert!((p.wait_at(1) - 56.1).abs() < 1e-9);
        // a read that is nearly all CPU still waits a tenth of its latency
        let busy = DiskProfile {
            device_read_cpu_us: 200.0,
            ..p
        };
        assert!((busy.wait_at(1) - 10.4).abs() < 1e-9);
    }
}
