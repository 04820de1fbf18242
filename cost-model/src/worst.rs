//! The worst-case Design Continuum model (MODEL.md §3): every key is assumed to be in the last level, every
//! write to travel through every level.

use crate::dist::data_shape;
use crate::keys::KeySpace;
use crate::layout;
use crate::probes::Probes;
use crate::{weigh, IoCost, IoModel, ModelError, PerOp};
use cosine_design::{Design, DesignClass, Workload};

/// The Design Continuum's worst-case cost model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorstCase;

impl IoModel for WorstCase {
    fn evaluate(&self, design: &Design, workload: &Workload) -> Result<IoCost, ModelError> {
        design.validate()?;
        workload.validate()?;
        if design.buffer_bytes < workload.entry_bytes() {
            return Err(ModelError::BufferTooSmall {
                buffer_bytes: design.buffer_bytes,
                entry_bytes: workload.entry_bytes(),
            });
        }
        // the worst case ignores the key distribution: every write is a new key
        let keys = KeySpace::Uniform {
            universe: f64::INFINITY,
        };
        let mut shape = data_shape(design, workload, &keys, &crate::ReferenceQuirks::NONE);
        shape.effective_entries = shape.entries;
        let (t, k, z) = (
            design.size_ratio as f64,
            design.hot_runs as f64,
            design.cold_runs as f64,
        );
        let b = shape.entries_per_block;
        let s = workload.scan_length as f64;
        if design.filter_bytes == 0 && t > b {
            let per_op = PerOp {
                lookup: 1.0,
                empty_lookup: 1.0,
                insert: 1.0 / b,
                blind_update: 1.0 + 1.0 / b,
                rmw: 1.0 + 1.0 / b,
                long_scan: s,
                short_scan: s,
            };
            // the worst-case model prices one log
            return Ok(IoCost::lsh(
                design,
                workload,
                1,
                per_op,
                per_op.long_scan,
                Probes {
                    lookup: 1.0,
                    empty_lookup: 1.0,
                },
            ));
        }
        let l = layout::level_count(
            shape.entries,
            shape.entry_bytes,
            design.buffer_bytes as f64,
            t,
        );
        let y = layout::cold_levels_for_fences(design.fence_bytes as f64, l, t, &shape);
        let hot = l - y;
        let filtered = design.filter_bytes > 0 && hot > 0;
        // R with T^Y in the exponent (filters cover the hot levels only), capped at the hot runs' count
        let max_r = if hot > 0 {
            k * (hot as f64 - 1.0) + z
        } else {
            0.0
        };
        let r = if filtered {
            let bits = 8.0 * design.filter_bytes as f64 / shape.entries * t.powi(y as i32);
            crate::bloom::fluid_r_low_memory(bits, t, k, z).0.min(max_r)
        } else {
            max_r
        };
        let class = DesignClass::classify(design.filter_bytes, y, design.size_ratio, b as u64);
        let yz = y as f64 * z;
        let (empty_lookup, lookup) = if l == 0 {
            (0.0, 0.0)
        } else {
            (r + yz, 1.0 + r + yz)
        };
        let insert = if l == 0 {
            0.0
        } else {
            ((t / k) * (hot as f64 - 1.0).max(0.0) + (t / z) * (y as f64 + 1.0)) / b
        };
        let blind_update = if filtered { insert } else { lookup + 1.0 / b };
        let rmw = if filtered {
            lookup + insert
        } else {
            lookup + 1.0 / b
        };
        let short_scan = if l == 0 {
            0.0
        } else {
            k * (hot as f64 - 1.0).max(0.0) + z * (y as f64 + 1.0)
        };
        let long_scan = if l == 0 { 0.0 } else { s * z / b };
        let scan = if s <= b {
            short_scan
        } else {
            long_scan.max(short_scan)
        };
        let per_op = PerOp {
            lookup,
            empty_lookup,
            insert,
            blind_update,
            rmw,
            long_scan,
            short_scan,
        };
        let per_operation = weigh(workload, &per_op, scan);
        Ok(IoCost {
            class,
            levels: l,
            cold_levels: y,
            fpr_sum: r,
            filter_bytes: design.filter_bytes as f64,
            fence_bytes: design.fence_bytes as f64,
            per_op,
            scan,
            per_operation,
            total: per_operation * workload.operations as f64,
            // every key in the last level: a lookup meets every run, as a scan seeks into each
            probes: Probes {
                lookup: short_scan,
                empty_lookup: short_scan,
            },
        })
    }
}
