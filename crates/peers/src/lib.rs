//! The peer engines behind the YCSB harness's `Store` trait ([`adapters`]), the memory cgroups the benchmark runs
//! them in ([`cgroup`]), and RocksDB as an engine `cosine learn` tunes ([`learn`], with the `peers` feature).
//! The `cosine-peers` binary (src/main.rs) is the BENCHMARKS.md runner over them.

pub mod adapters;
pub use cosine_validate::cgroup;
#[cfg(feature = "peers")]
pub mod learn;
