//! `--calibrate-phi`: Algorithm 1 on the peers that are fixed systems of the φ library (RocksDB, WiredTiger,
//! FASTER), their entries added to a φ library with a record of how each was measured.

use crate::args::{machine_cores, Args};
use crate::engines::open;
use anyhow::{bail, Result};
use cosine_cost_model::cpu::PhiLibrary;
use cosine_ycsb::CalibrationStage;

/// Algorithm 1 on the peers: their φ entries, added to a φ library.
pub(crate) fn calibrate_peers(a: &Args, engines: &[String], out: &str) -> Result<()> {
    let mut lib = match &a.phi_base {
        Some(p) => PhiLibrary::named_or_file(p)?,
        None => PhiLibrary::learned(),
    };
    let eta = (machine_cores() as usize).max(2);
    let started = std::time::Instant::now();
    let (systems, notes) = phi_systems(engines);
    for n in &notes {
        eprintln!("{n}");
    }
    if systems.is_empty() {
        bail!(
            "--calibrate-phi: none of --engines is a fixed system of the φ library ({FIXED_NAMES})"
        );
    }
    for (lib_name, e) in systems {
        let dir_of = |op: &str| std::path::Path::new(&a.dir).join(format!("phi-{e}-{op}"));
        // FASTER has no ordered scan (its range entry keeps the base library's value, with a note), and cannot
        // run below its minimum memory
        let faster = e == "faster";
        let which: Vec<&str> = cosine_ycsb::CALIBRATION_OPS
            .iter()
            .copied()
            .filter(|op| !(faster && *op == "range"))
            .collect();
        let floor = if faster { FASTER_MIN_MEMORY } else { 0 };
        let phis = cosine_ycsb::calibrate_ops(
            a.records,
            a.ops,
            eta,
            &which,
            |op, w, stage| {
                let dir = dir_of(op);
                let memory = match stage {
                    CalibrationStage::Load => {
                        let _ = std::fs::remove_dir_all(&dir);
                        std::fs::create_dir_all(&dir).map_err(|x| x.to_string())?;
                        a.memory.max(floor)
                    }
                    // the timings reopen the loaded store with room for every timed write in its write
                    // buffer (RocksDB's is a quarter of the budget; WiredTiger's cache is all of it; FASTER's
                    // mutable log region most of it)
                    CalibrationStage::Time { write_room } => {
                        a.memory.max(4 * write_room).max(floor)
                    }
                };
                open(e, w, memory, &dir, a.durable).map_err(|x| x.to_string())
            },
            |op, phi| {
                let _ = std::fs::remove_dir_all(dir_of(op));
                eprintln!("{}", cosine_ycsb::phi_line(lib_name, op, phi));
            },
        )
        .map_err(|x| anyhow::anyhow!(x))?;
        cosine_ycsb::record_phi_partial(&mut lib, lib_name, &phis, "FASTER has no ordered scan");
        let provenance = format!(
            "{lib_name} by cosine-peers --calibrate-phi{} ({} records, {} operations per measurement{})",
            if e == lib_name {
                String::new()
            } else {
                format!(" on {e}")
            },
            a.records,
            a.ops,
            if faster && a.memory < floor {
                format!(", {} MiB: FASTER's minimum", floor >> 20)
            } else {
                String::new()
            }
        );
        lib.machine = with_provenance(&lib.machine, lib_name, &provenance);
    }
    std::fs::write(out, serde_json::to_string_pretty(&lib)? + "\n")?;
    eprintln!("wrote {out} in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The φ library's fixed system an engine name of `--engines` calibrates, and the engine it is measured on:
/// the configuration the search's fixed design prices. The search's WiredTiger is WiredTiger's B-tree with its
/// default 32 KiB leaves (`Baseline::WiredTiger`, T = 32 ≤ the entries of a leaf), so its φ is measured on
/// `wiredtiger-32k`, whether `wiredtiger` (the benchmark's B-tree with 8 KB leaves) or `wiredtiger-32k` is
/// named. None for an engine that is not a fixed system (ours, fjall, redb, sled, the LSM table).
fn phi_system(engine: &str) -> Option<(&'static str, &'static str)> {
    match engine {
        "rocksdb" => Some(("rocksdb", "rocksdb")),
        "wiredtiger" | "wiredtiger-32k" => Some(("wiredtiger", "wiredtiger-32k")),
        "faster" => Some(("faster", "faster")),
        _ => None,
    }
}

/// The engine names `--calibrate-phi` takes, as its messages list them.
pub(crate) const FIXED_NAMES: &str = "rocksdb, wiredtiger or wiredtiger-32k, faster";

/// The fixed systems `--calibrate-phi` measures for `--engines`, each once, in the order named, as (the φ
/// library's name, the engine it is measured on); and a line for each name that was mapped to another engine
/// or skipped.
pub(crate) fn phi_systems(engines: &[String]) -> (Vec<(&'static str, &'static str)>, Vec<String>) {
    let mut systems = Vec::new();
    let mut notes = Vec::new();
    for e in engines {
        match phi_system(e) {
            Some(s) if systems.contains(&s) => {}
            Some((lib_name, engine)) => {
                if engine != e {
                    notes.push(format!(
                        "{e}: the φ library's {lib_name} is measured on {engine}, the configuration the search prices"
                    ));
                }
                systems.push((lib_name, engine));
            }
            None => notes.push(format!(
                "{e}: not a fixed system of the φ library ({FIXED_NAMES}); skipped"
            )),
        }
    }
    (systems, notes)
}

/// The φ library's machine line with `provenance` as the one record of how `lib_name`'s entry was measured:
/// an earlier calibration's record of the same system is replaced, not kept beside the new one.
fn with_provenance(machine: &str, lib_name: &str, provenance: &str) -> String {
    let earlier = format!("{lib_name} by cosine-peers --calibrate-phi");
    machine
        .split("; ")
        .filter(|part| !part.starts_with(&earlier))
        .chain(std::iter::once(provenance))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The least memory FASTER runs in (six 32 MiB log pages and its index); 0 when it is not built.
#[cfg(feature = "faster")]
pub(crate) const FASTER_MIN_MEMORY: u64 = cosine_peers::adapters::faster::MIN_MEMORY;
#[cfg(not(feature = "faster"))]
pub(crate) const FASTER_MIN_MEMORY: u64 = 0;

#[cfg(test)]
mod tests {
    use super::{phi_system, phi_systems, with_provenance};
    #[cfg(feature = "wiredtiger")]
    use cosine_peers::adapters;

    #[test]
    fn the_phi_librarys_wiredtiger_is_measured_on_the_leaves_the_search_prices() {
        // the search prices WiredTiger's B-tree over 32 KiB leaves; the benchmark's `wiredtiger` has 8 KB ones
        assert_eq!(cosine_search::designs::WIREDTIGER_LEAF_BYTES, 32 * 1024);
        assert_eq!(
            phi_system("wiredtiger"),
            Some(("wiredtiger", "wiredtiger-32k"))
        );
        assert_eq!(
            phi_system("wiredtiger-32k"),
            Some(("wiredtiger", "wiredtiger-32k"))
        );
        assert_eq!(phi_system("rocksdb"), Some(("rocksdb", "rocksdb")));
        assert_eq!(phi_system("faster"), Some(("faster", "faster")));
        for not_fixed in [
            "cosine",
            "rocksdb-cosine",
            "wiredtiger-lsm",
            "fjall",
            "redb",
            "sled",
        ] {
            assert_eq!(phi_system(not_fixed), None, "{not_fixed}");
        }
        #[cfg(feature = "wiredtiger")]
        assert_eq!(
            adapters::wiredtiger::Table::named("wiredtiger-32k").map(|t| t.leaf_page_max()),
            Some(None),
            "wiredtiger-32k must keep WiredTiger's default leaves"
        );
    }

    #[test]
    fn each_fixed_system_is_measured_once_and_the_rest_are_named() {
        let names: Vec<String> = ["cosine", "wiredtiger", "rocksdb", "wiredtiger-32k", "sled"]
            .map(String::from)
            .to_vec();
        let (systems, notes) = phi_systems(&names);
        assert_eq!(
            systems,
            [("wiredtiger", "wiredtiger-32k"), ("rocksdb", "rocksdb")]
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].starts_with("cosine: not a fixed system"),
            "{notes:?}"
        );
        assert!(notes[1]
            .starts_with("wiredtiger: the φ library's wiredtiger is measured on wiredtiger-32k"));
        assert!(
            notes[2].starts_with("sled: not a fixed system"),
            "{notes:?}"
        );
        assert!(phi_systems(&["fjall".to_string()]).0.is_empty());
    }

    #[test]
    fn a_recalibration_replaces_the_systems_earlier_provenance() {
        let once = with_provenance(
            "2 cores; wiredtiger by cosine-peers --calibrate-phi (200000 records, 200000 operations per measurement)",
            "wiredtiger",
            "wiredtiger by cosine-peers --calibrate-phi on wiredtiger-32k (20000 records)",
        );
        assert_eq!(
            once,
            "2 cores; wiredtiger by cosine-peers --calibrate-phi on wiredtiger-32k (20000 records)"
        );
        // another system's record stays
        let both = with_provenance(
            &once,
            "rocksdb",
            "rocksdb by cosine-peers --calibrate-phi (1 records)",
        );
        assert!(
            both.contains("wiredtiger by")
                && both.ends_with("rocksdb by cosine-peers --calibrate-phi (1 records)")
        );
    }
}
