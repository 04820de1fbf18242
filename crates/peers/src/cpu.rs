//! `--measure-cpu`: the CPU an operation costs each peer that is a fixed system of the search (RocksDB,
//! WiredTiger's B-tree with its default leaves, FASTER), per operation type, as `cosine profile` measures our
//! engine ([`cosine_validate::measure_op_cpu`]): each type timed alone on one thread, its data in memory, its
//! writes in the buffer. Their entries are added to a CPU library.

use crate::args::Args;
use crate::engines::open;
use crate::phi::{phi_systems, FASTER_MIN_MEMORY, FIXED_NAMES};
use anyhow::{bail, Result};
use cosine_cost_model::cpu::CpuLibrary;
use cosine_ycsb::CalibrationStage;

/// Measures the peers named in `engines` that are fixed systems and writes the CPU library with their entries
/// to `out`.
pub(crate) fn measure_peers(a: &Args, engines: &[String], out: &str) -> Result<()> {
    let mut lib = match &a.cpu_base {
        Some(p) => CpuLibrary::named_or_file(p)?,
        None => CpuLibrary::learned(),
    };
    let (systems, notes) = phi_systems(engines);
    for n in &notes {
        eprintln!("{n}");
    }
    if systems.is_empty() {
        bail!("--measure-cpu: none of --engines is a fixed system of the search ({FIXED_NAMES})");
    }
    let started = std::time::Instant::now();
    for (lib_name, e) in systems {
        let dir_of = |op: &str| std::path::Path::new(&a.dir).join(format!("cpu-{e}-{op}"));
        let floor = if e == "faster" { FASTER_MIN_MEMORY } else { 0 };
        let m = cosine_validate::measure_op_cpu(
            a.records,
            a.ops,
            2,
            |op, w, stage| {
                let dir = dir_of(op);
                let memory = match stage {
                    CalibrationStage::Load => {
                        let _ = std::fs::remove_dir_all(&dir);
                        std::fs::create_dir_all(&dir).map_err(|x| x.to_string())?;
                        a.memory.max(floor)
                    }
                    // room for every timed write in the write buffer (RocksDB's is a quarter of the budget)
                    CalibrationStage::Time { write_room } => {
                        a.memory.max(4 * write_room).max(floor)
                    }
                };
                open(e, w, memory, &dir, a.durable).map_err(|x| x.to_string())
            },
            |op, us| eprintln!("{lib_name} {op}: {us:.2} µs of CPU an operation"),
        );
        for op in ["lookup", "insert", "blind_update", "rmw", "range"] {
            let _ = std::fs::remove_dir_all(dir_of(op));
        }
        let mut op = m.map_err(|x| anyhow::anyhow!(x))?.op;
        if e == "faster" {
            // FASTER has no ordered scan: a scan of s keys is s lookups, as the model prices it
            op.scan_us = 0.0;
            op.scan_entry_us = op.lookup_us;
        }
        lib.entries.insert(lib_name.to_string(), op);
        let provenance = format!(
            "{lib_name} by cosine-peers --measure-cpu{} ({} records, {} operations a round)",
            if e == lib_name {
                String::new()
            } else {
                format!(" on {e}")
            },
            a.records,
            a.ops
        );
        let earlier = format!("{lib_name} by cosine-peers --measure-cpu");
        lib.machine = lib
            .machine
            .split("; ")
            .filter(|part| !part.starts_with(&earlier))
            .chain(std::iter::once(provenance.as_str()))
            .collect::<Vec<_>>()
            .join("; ");
    }
    std::fs::write(out, serde_json::to_string_pretty(&lib)? + "\n")?;
    eprintln!("wrote {out} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}
