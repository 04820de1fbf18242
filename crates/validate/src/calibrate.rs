//! Algorithm 1 on our engine: φ per design class and operation type, from the speedup of 1..η threads.

use crate::harness::class_designs;
use crate::{Error, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_engine::{Engine, Options, SyncMode};
use cosine_ycsb::{CalibrationStage, CosineStore, PhiMeasurement, Store};
use std::sync::Arc;

/// Measures φ for the four fixed class designs (16 MiB each) with `records` records and `ops` operations per
/// measurement on up to `eta` threads, every write handed to the OS and no fsync. `each` hears every
/// (class, operation, measurement) as it is made. Returns the library with the four classes' entries and the
/// paper's values for the systems (until `cosine-peers --calibrate-phi` measures them).
pub fn calibrate_engine(
    records: u64,
    ops: u64,
    eta: usize,
    mut each: impl FnMut(&str, &str, &PhiMeasurement),
) -> Result<PhiLibrary> {
    if eta < 2 {
        return Err(Error::Invalid(
            "calibration needs at least 2 cores to observe a speedup".into(),
        ));
    }
    let mut lib = PhiLibrary::paper();
    lib.entries
        .retain(|k, _| !["lsm", "btree", "lsh", "hybrid"].contains(&k.as_str()));
    for (class, design) in class_designs(16 << 20) {
        let dir_of = |op: &str| {
            std::env::temp_dir().join(format!(
                "cosine-calibrate-{}-{class}-{op}",
                std::process::id()
            ))
        };
        let phis = cosine_ycsb::calibrate(
            records,
            ops,
            eta,
            |op, _, stage| {
                // the timings reopen the loaded tree with a buffer that holds every timed write
                let mut design = design.clone();
                if let CalibrationStage::Time { write_room } = stage {
                    design.buffer_bytes = design.buffer_bytes.max(write_room);
                }
                let engine =
                    Engine::open_with(dir_of(op), &design, Options::with_sync(SyncMode::Never))
                        .map_err(|e| e.to_string())?;
                Ok(Box::new(CosineStore(Arc::new(engine))) as Box<dyn Store>)
            },
            |op, phi| {
                let _ = std::fs::remove_dir_all(dir_of(op));
                each(class.as_str(), op, phi);
            },
        )
        .map_err(Error::Invalid)?;
        cosine_ycsb::record_phi(&mut lib, class.as_str(), &phis);
    }
    Ok(lib)
}
