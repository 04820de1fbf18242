//! The command line of `cosine-peers` ([`Args`]), and what it names: the engines and workloads of a run, and
//! this machine's cores.

use anyhow::{anyhow, Result};
use clap::Parser;
use cosine_ycsb::CoreWorkload;

/// Arguments.
#[derive(Parser, Debug)]
#[command(
    name = "cosine-peers",
    about = "YCSB A-F on Cosine and peer engines with the same memory"
)]
pub(crate) struct Args {
    /// Engines, comma-separated: cosine, cosine-leveled (our engine with the leveled LSM design that
    /// rocksdb-cosine gets: the search's design against its best leveled one), cosine-lsh and
    /// cosine-lsh-append-only (our engine as a log-structured hash table, with FASTER's hybrid log or an
    /// append-only one: the shape to set beside faster), rocksdb, rocksdb-cosine
    /// (RocksDB with the leveled LSM parameters Cosine's search picks), fjall, redb, sled, wiredtiger (its
    /// B-tree with 8 KB leaf pages), wiredtiger-32k (the B-tree with WiredTiger's default 32 KB leaves),
    /// wiredtiger-lsm, faster (the `faster` feature; at least 224 MiB of --memory).
    #[arg(
        long,
        default_value = "cosine,rocksdb,rocksdb-cosine,wiredtiger,wiredtiger-lsm,fjall,redb,sled"
    )]
    pub(crate) engines: String,
    /// YCSB workloads, comma-separated.
    #[arg(long, default_value = "ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f")]
    pub(crate) workloads: String,
    /// Records loaded.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) records: u64,
    /// Operations per workload.
    #[arg(long, default_value_t = 200_000)]
    pub(crate) ops: u64,
    /// Client threads.
    #[arg(long, default_value_t = 2)]
    pub(crate) threads: usize,
    /// Memory for each engine's caches and buffers, bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub(crate) memory: u64,
    /// Where the databases live.
    #[arg(long, default_value = "/tmp/cosine-peers")]
    pub(crate) dir: String,
    /// Print JSON rows instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Instead of the table: run Algorithm 1 (1 and 2..=cores threads per operation type) on each peer named
    /// in --engines that is a fixed system of the φ library (rocksdb, wiredtiger, faster), add their entries to the
    /// library read from --phi-base, and write it here. WiredTiger's entry is measured on wiredtiger-32k (the
    /// B-tree with its default 32 KB leaves, as the search's fixed WiredTiger design), whichever of wiredtiger
    /// and wiredtiger-32k is named.
    #[arg(long)]
    pub(crate) calibrate_phi: Option<String>,
    /// The φ library the calibrated peers are added to (default: the learned library shipped in the crate).
    #[arg(long)]
    pub(crate) phi_base: Option<String>,
    /// Instead of the table: measure the CPU an operation costs each peer named in --engines that is a fixed
    /// system of the search (rocksdb, wiredtiger, faster), per operation type on one thread with its data in
    /// memory (as `cosine profile` measures our engine), add their entries to the CPU library read from
    /// --cpu-base, and write it here.
    #[arg(long)]
    pub(crate) measure_cpu: Option<String>,
    /// The CPU library the measured peers are added to (default: the one shipped in the crate).
    #[arg(long)]
    pub(crate) cpu_base: Option<String>,
    /// Runs of every (workload, engine) cell; the engine order is rotated from round to round, and the
    /// table shows the median and the spread.
    #[arg(long, default_value_t = 3)]
    pub(crate) rounds: usize,
    /// The seed of the first round's keys and operations (each round adds 10): another seed draws other keys,
    /// for a check on runs a model was not fitted to.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Runs every cell in a memory cgroup capped at this many bytes (page cache included), so that with the
    /// data at least 4× the cap, reads reach the device. Needs a writable cgroup file system (v1 or v2).
    #[arg(long)]
    pub(crate) memory_cap: Option<u64>,
    /// With --memory-cap on a machine where no memory cgroup can be made: run without the cap and say so
    /// (instead of one clear error).
    #[arg(long)]
    pub(crate) cap_or_warn: bool,
    /// A design file (design.json) the engine `cosine` runs, in place of the design the search picks for the
    /// workload and --memory.
    #[arg(long)]
    pub(crate) design: Option<String>,
    /// Every engine fsyncs every write (or group of concurrent writes) before acknowledging it. Default:
    /// every write handed to the OS, no fsync.
    #[arg(long)]
    pub(crate) durable: bool,
    /// glibc malloc arenas of every cell's process (`MALLOC_ARENA_MAX`), the same for every engine; 0 keeps
    /// glibc's default (8 per core). With its default, glibc gives each thread that allocates at once an arena
    /// of its own and returns little of their freed memory: WiredTiger with a 32 MiB cache reached 130 MiB of
    /// heap that way and was OOM-killed under a 128 MiB cap, and fits in 64-74 MiB with 1 or 2 arenas.
    #[arg(long, default_value_t = machine_cores() as usize)]
    pub(crate) malloc_arenas: usize,
    /// Operations of the workload run after the load has settled and before the timed run, verified like the
    /// run but not timed: every engine's caches (Cosine's entry cache, RocksDB's and WiredTiger's block
    /// caches, the page cache) start the run warm. The run continues after the warm-up's inserts, and every
    /// engine is settled again before it. Default: as many as --ops
    #[arg(long)]
    pub(crate) warmup: Option<u64>,
    /// Seconds a cell (load, settle and run of one engine on one workload) may take before it is stopped
    /// and reported as timed out.
    #[arg(long, default_value_t = 1800)]
    pub(crate) cell_timeout: u64,
    /// Instead of running the engines: for each workload, the floor no engine can go below under the memory
    /// cap (or --memory without one): the records a perfect cache of all those bytes holds, the most of the
    /// point reads it answers under the workload's request distribution, and the point reads an operation
    /// that reach the device even then.
    #[arg(long)]
    pub(crate) ceiling: bool,
    /// (internal) Run one cell, ENGINE:WORKLOAD:ROUND, in this process and print its JSON row.
    #[arg(long, hide = true)]
    pub(crate) cell: Option<String>,
    /// (internal) The cgroup directory the cell's process joins first.
    #[arg(long, hide = true)]
    pub(crate) cgroup: Option<String>,
}

impl Args {
    /// The engines `--engines` names, in its order.
    pub(crate) fn engine_names(&self) -> Vec<String> {
        self.engines
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// The workloads `--workloads` names, in its order, each with `--records` and `--ops`.
    pub(crate) fn named_workloads(&self) -> Result<Vec<CoreWorkload>> {
        self.workloads
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|n| self.workload(n))
            .collect()
    }

    /// The named workload with `--records` and `--ops`.
    pub(crate) fn workload(&self, name: &str) -> Result<CoreWorkload> {
        let mut w = CoreWorkload::named(name).ok_or_else(|| anyhow!("unknown workload {name}"))?;
        w.record_count = self.records;
        w.operation_count = self.ops;
        Ok(w)
    }
}

/// Cores of this machine: the η the search designs for and the most threads Algorithm 1 times.
pub(crate) fn machine_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}
