//! The buffer grid (memory hopping): every shape over the ε grid of buffer shares, the fastest refined by
//! binary steps; the whole design search of a shard.

use crate::designs::memo::{Grid, Priced};
use crate::designs::shapes::{
    base_design, lsm_runs, with_class_defaults, Shape, BTREE_SIZE_RATIOS, LSM_SIZE_RATIOS,
};
use crate::designs::templates::Winner;
use crate::designs::{Scored, Shard};
use cosine_cost_model::layout::{self};
use cosine_cost_model::ReferenceQuirks;
use cosine_design::{Design, DesignClass};
use std::sync::Arc;

/// Shapes whose buffer share is refined after the ε grid ranked them. A shape's latency can fall steeply
/// between two grid points (a B-tree whose leaves come to fit in memory), so a shape third on the grid can come
/// first once refined; four keeps that in.
pub const REFINED_SHAPES: usize = 4;

impl Shard<'_> {
    /// An LSM-like or hybrid design with the given buffer: the rest of memory goes to fences first (as many hot
    /// levels as fit), then filters.
    pub(super) fn lsm_design(&self, t: u64, k: u64, z: u64, m_b: u64) -> Option<Design> {
        let m = self.memory_bytes;
        if m_b == 0 || m_b >= m {
            return None;
        }
        let shape = self.shape();
        let levels = layout::level_count(
            shape.effective_entries,
            shape.entry_bytes,
            m_b as f64,
            t as f64,
        );
        if levels == 0 {
            // the shard fits in the buffer: nothing to filter or fence
            return Some(base_design(t, k, z, self.block_bytes, m_b, 0, 0));
        }
        let split = layout::memory_split(
            (m - m_b) as f64,
            m_b as f64,
            t as f64,
            k as f64,
            z as f64,
            levels,
            &shape,
            &ReferenceQuirks::NONE,
        );
        Some(base_design(
            t,
            k,
            z,
            self.block_bytes,
            m_b,
            split.filter_bytes as u64,
            split.fence_bytes.ceil() as u64,
        ))
    }

    /// The best buffer share on the ε grid (and the all-buffer corner), of the buffer ceiling.
    pub(super) fn buffer_grid(
        &self,
        make: &impl Fn(u64) -> Option<Design>,
    ) -> Option<(f64, Scored)> {
        self.grid_over(make, &self.grid_fractions())
    }

    /// The fastest of `make`'s designs over the buffer shares `fracs`.
    pub(super) fn grid_over(
        &self,
        make: &impl Fn(u64) -> Option<Design>,
        fracs: &[f64],
    ) -> Option<(f64, Scored)> {
        let m = self.buffer_ceiling() as f64;
        let mut best: Option<(f64, Scored)> = None;
        for &frac in fracs {
            if let Some(s) = make((m * frac) as u64).and_then(|d| self.score(d)) {
                if best.as_ref().is_none_or(|(_, b)| s.latency_s < b.latency_s) {
                    best = Some((frac, s));
                }
            }
        }
        best
    }

    /// The ε grid of buffer shares (of [`Shard::buffer_ceiling`]: the memory, or the largest buffer that
    /// recovers in time), plus the corner where (nearly) all of it is buffer: a shard that fits in memory.
    pub(super) fn grid_fractions(&self) -> Vec<f64> {
        let steps = (1.0 / self.epsilon).round().max(2.0) as u64;
        (1..steps)
            .map(|i| i as f64 / steps as f64)
            .chain([0.95, 0.99, 0.999])
            .collect()
    }

    /// Binary refinement of the buffer share around `frac` (memory hopping's second phase).
    pub(super) fn refine_buffer(
        &self,
        make: &impl Fn(u64) -> Option<Design>,
        mut frac: f64,
        mut s: Scored,
    ) -> Scored {
        let m = self.buffer_ceiling() as f64;
        let steps = (1.0 / self.epsilon).round().max(2.0);
        let mut step = 0.5 / steps;
        for _ in 0..5 {
            for cand in [frac - step, frac + step] {
                if cand <= 0.0 || cand >= 1.0 {
                    continue;
                }
                if let Some(c) = make((m * cand) as u64).and_then(|d| self.score(d)) {
                    if c.latency_s < s.latency_s {
                        s = c;
                        frac = cand;
                    }
                }
            }
            step /= 2.0;
        }
        s
    }

    /// The fastest leveled LSM design (K = Z = 1 with filters) over the size ratios and buffer sizes.
    pub fn best_leveled_lsm(&self) -> Option<Scored> {
        LSM_SIZE_RATIOS
            .into_iter()
            .filter_map(|t| {
                // the leveled choices recorded, so that the model prices them as they are (what a RocksDB
                // configured to the design runs), not Table 1's for a class the model may derive
                let make = move |m_b| {
                    self.lsm_design(t, 1, 1, m_b)
                        .map(|d| with_class_defaults(d, DesignClass::Lsm))
                };
                let (frac, s) = self.buffer_grid(&make)?;
                Some(self.refine_buffer(&make, frac, s))
            })
            .filter(|s| s.design.filter_bytes > 0)
            .min_by(|a, b| a.latency_s.total_cmp(&b.latency_s))
    }

    /// The fastest design for this shard over the LSM/hybrid, B-tree and LSH spaces: every shape (T, K, Z, class)
    /// on the ε grid of buffer sizes, then the binary refinement of the buffer for the [`REFINED_SHAPES`] best.
    pub fn best(&self) -> Option<Scored> {
        let shapes = self.shapes();
        let graded = self.graded(&shapes);
        self.finish(&shapes, graded)
    }

    /// Every shape the design search walks on this shard: LSM-like and hybrid (T, K, Z) and B-tree-like T.
    pub fn shapes(&self) -> Vec<Shape> {
        let mut shapes = Vec::new();
        for t in LSM_SIZE_RATIOS {
            for (k, z) in lsm_runs(t) {
                shapes.push(Shape::Lsm { t, k, z });
            }
        }
        let b = self.shape().entries_per_block as u64;
        for t in BTREE_SIZE_RATIOS.into_iter().filter(|t| *t <= b) {
            shapes.push(Shape::Btree { t });
        }
        shapes
    }

    /// The design of `shape` with `m_b` bytes of buffer, the rest of memory split as the shape's class splits it.
    pub(super) fn make(&self, shape: Shape, m_b: u64) -> Option<Design> {
        let m = self.memory_bytes;
        match shape {
            Shape::Lsm { t, k, z } => self.lsm_design(t, k, z, m_b),
            Shape::Btree { t } => {
                (m_b < m).then(|| base_design(t, 1, 1, self.block_bytes, m_b, 0, m - m_b))
            }
        }
    }

    /// Every shape of [`Shard::shapes`] at its fastest point of the ε grid, fastest first. The grid is priced
    /// once per shard size and memory (the VM types that share them share it), then timed on this VM.
    pub(super) fn graded(&self, shapes: &[Shape]) -> Vec<(usize, f64, Scored)> {
        if let Some(c) = self.scored {
            c.add(shapes.len() * self.grid_fractions().len());
        }
        self.ranked(shapes)
    }

    /// [`Shard::graded`] without counting the designs (a ranking read again).
    pub(super) fn ranked(&self, shapes: &[Shape]) -> Vec<(usize, f64, Scored)> {
        let m = self.buffer_ceiling() as f64;
        let fracs = self.grid_fractions();
        let price = || -> Grid {
            shapes
                .iter()
                .map(|&shape| {
                    fracs
                        .iter()
                        .map(|&f| {
                            self.make(shape, (m * f) as u64)
                                .and_then(|d| self.evaluate(&d))
                        })
                        .collect()
                })
                .collect()
        };
        let grid = match self.memo {
            Some(memo) => memo.grid(self.grid_key(), price),
            None => Arc::new(price()),
        };
        let mut graded: Vec<(usize, f64, Scored)> = Vec::new();
        for (i, row) in grid.iter().enumerate() {
            // the first fastest point, as walking the grid in order finds it
            let mut pick: Option<(f64, Priced, f64)> = None;
            for (&frac, cell) in fracs.iter().zip(row) {
                if let Some(priced) = *cell {
                    let latency = self.timed(&priced).latency_s;
                    if pick.is_none_or(|p| latency < p.2) {
                        pick = Some((frac, priced, latency));
                    }
                }
            }
            if let Some((frac, priced, _)) = pick {
                if let Some(s) = self
                    .make(shapes[i], (m * frac) as u64)
                    .and_then(|d| self.scored(d, &priced))
                {
                    graded.push((i, frac, s));
                }
            }
        }
        graded.sort_by(|a, b| a.2.latency_s.total_cmp(&b.2.latency_s));
        graded
    }

    /// The binary refinement of the buffer for the [`REFINED_SHAPES`] fastest graded shapes, against Cosine's LSH
    /// design; then the entry cache for the winner's shape.
    pub(super) fn finish(
        &self,
        shapes: &[Shape],
        graded: Vec<(usize, f64, Scored)>,
    ) -> Option<Scored> {
        let mut best: Option<(Winner, Scored)> = None;
        for (i, frac, s) in graded.into_iter().take(REFINED_SHAPES) {
            let r = self.refine_buffer(&|m_b| self.make(shapes[i], m_b), frac, s);
            if best.as_ref().is_none_or(|(_, b)| r.latency_s < b.latency_s) {
                best = Some((Winner::Grid(shapes[i]), r));
            }
        }
        if let Some((layout, l)) = self.best_lsh() {
            if best.as_ref().is_none_or(|(_, b)| l.latency_s < b.latency_s) {
                best = Some((Winner::Lsh(layout), l));
            }
        }
        best.map(|(winner, s)| self.with_cache(winner, s))
    }

    /// The `n` fastest shapes of this shard's whole ε grid (what [`Shard::best`] ranks).
    pub fn top_shapes(&self, n: usize) -> Vec<Shape> {
        let shapes = self.shapes();
        self.ranked(&shapes)
            .into_iter()
            .take(n)
            .map(|(i, _, _)| shapes[i])
            .collect()
    }

    /// [`Shard::best`] over a few shapes only (each on the whole ε grid, the fastest refined): for a shard
    /// between two fully searched sizes, the shapes that came first there.
    pub fn best_among(&self, shapes: &[Shape]) -> Option<Scored> {
        // only shapes this shard's search has (a B-tree's fanout stays within a block)
        let own = self.shapes();
        let shapes: Vec<Shape> = shapes.iter().copied().filter(|s| own.contains(s)).collect();
        let shapes = &shapes[..];
        let fracs = self.grid_fractions();
        let mut graded: Vec<(usize, f64, Scored)> = shapes
            .iter()
            .enumerate()
            .filter_map(|(i, &shape)| {
                self.grid_over(&|m_b| self.make(shape, m_b), &fracs)
                    .map(|(f, s)| (i, f, s))
            })
            .collect();
        graded.sort_by(|a, b| a.2.latency_s.total_cmp(&b.2.latency_s));
        self.finish(shapes, graded)
    }
}

impl Shard<'_> {
    /// The search's pick ([`Shard::best`]) and the fastest designs of the other shapes after it, each shape
    /// (T, K, Z, class, log) once, `n` in all, fastest first: each shape of the ε grid refined, and each LSH
    /// layout.
    pub fn ranked_designs(&self, n: usize) -> Vec<Scored> {
        let shapes = self.shapes();
        let mut all: Vec<Scored> = self
            .ranked(&shapes)
            .into_iter()
            .map(|(i, frac, s)| self.refine_buffer(&|m_b| self.make(shapes[i], m_b), frac, s))
            .collect();
        all.extend(super::lsh::lsh_layouts().filter_map(|(div, tiered)| {
            self.lsh_design_at(div, tiered).and_then(|d| self.score(d))
        }));
        all.sort_by(|a, b| a.latency_s.total_cmp(&b.latency_s));
        let key = |s: &Scored| {
            let d = &s.design;
            (d.size_ratio, d.hot_runs, d.cold_runs, s.class, d.log)
        };
        let mut out: Vec<Scored> = self.best().into_iter().collect();
        for s in all {
            if out.len() >= n {
                break;
            }
            if !out.iter().any(|o| key(o) == key(&s)) {
                out.push(s);
            }
        }
        out.truncate(n);
        out
    }
}
