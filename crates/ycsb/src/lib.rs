//! `cosine-ycsb`: YCSB's core workloads over the engine (and, through the [`Store`] trait, over peer engines):
//! key choosers as YCSB defines them (uniform, scrambled zipfian with θ = 0.99, latest), a load phase and a run
//! phase on N client threads, latency percentiles (hdrhistogram) and the engine's I/O counts per operation.
//!
//! By concept: the workload ([`workload`]), keys and request choosers (`keys`), the [`Store`] trait and our
//! engine behind it (`store`), the phase runner ([`run_phase`], in `phase`) and what it reports (`report`),
//! verified results ([`verify`]), the process's own counters (`process`), Algorithm 1's calibration of φ
//! (`calibrate`) and the device-read floor no cache beats ([`ceiling`]). Every public item is re-exported here.
#![deny(missing_docs)]
// a library reports failures as typed errors; unit tests may unwrap
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod ceiling;
pub mod verify;
pub mod workload;

mod calibrate;
mod keys;
mod phase;
mod process;
mod report;
mod store;

pub use calibrate::{
    calibrate, calibrate_ops, calibration_workload, calibration_write_bytes, measure_speedups,
    phi_line, record_phi, record_phi_partial, CalibrationStage, PhiMeasurement, Speedups,
    CALIBRATION_OPS, CALIBRATION_ROUNDS,
};
pub use keys::{fnv64, key, KeyChooser, ZIPF_ITEMS};
pub use phase::run_phase;
pub use process::{cpu_seconds, peak_resident_bytes, resident_bytes};
pub use report::{ClientTimes, OpReport, PhaseReport};
pub use store::{CosineStore, Entries, IoCounters, Store, StoreError, StoreResult};
pub use verify::{KeyOrder, Ledger};
pub use workload::{parse_properties, CoreWorkload, Distribution};
