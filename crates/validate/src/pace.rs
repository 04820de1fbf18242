//! How validate's client paces its writes against the engine's flushes and merges, and the model that prices
//! a run at that pace.

use cosine_cost_model::DistributionAware;

/// How validate's client paces its writes against the engine's flushes and merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// The client waits for the flushes and merges after every quarter of a flush's writes ([`pace_of`]; load, warm-up and run):
    /// each flush is merged before the next one is made, so the tree keeps its design's shape and every
    /// flush gets its own merge, as the cost model prices a design.
    Merged,
    /// The client writes as fast as it can: a writer that outruns the merges lets flushed runs queue (up to
    /// the engine's stall) and one merge take several of them, fewer block writes a write than the design's
    /// rules, and a tree whose shape depends on the two speeds.
    Free,
}

impl Pace {
    /// The name a report records (`merged`, `free`).
    pub fn name(self) -> &'static str {
        match self {
            Pace::Merged => "merged",
            Pace::Free => "free",
        }
    }

    /// The pace a report row names (`merged` where it names none: the default since paces were recorded).
    pub fn named(name: Option<&str>) -> Self {
        match name {
            Some("free") => Pace::Free,
            _ => Pace::Merged,
        }
    }

    /// The model that prices a run at this pace: under [`Pace::Merged`] each flush is merged before the next
    /// as the planner's simulation settles it, so a window of writes meets the simulation's phase of its
    /// levels' merge cycles; under [`Pace::Free`] the phase is the engine's speeds', priced at the cycles'
    /// mean ([`cosine_cost_model::loaded::WritePhase`]).
    pub fn model(self) -> DistributionAware {
        DistributionAware {
            write_phase: match self {
                Pace::Merged => cosine_cost_model::loaded::WritePhase::Simulated,
                Pace::Free => cosine_cost_model::loaded::WritePhase::CycleMean,
            },
            ..DistributionAware::new()
        }
    }
}

/// The client's writes between two waits for the background work: a quarter of a flush's entries of `w`'s
/// records under [`Pace::Merged`], none under [`Pace::Free`]. A part then never fills a buffer twice: the
/// buffer charges an entry at least [`cosine_design::shape::sorted_buffer_entry_bytes`] (the skiplist's;
/// the hash log's table charges more, up to 1.4 of that with 100-byte values), so a part is at most half a
/// flush, and what the buffer held before it less than one.
pub fn pace_of(
    design: &cosine_design::Design,
    w: &cosine_ycsb::CoreWorkload,
    pace: Pace,
) -> Option<u64> {
    match pace {
        Pace::Merged => {
            let entry = cosine_design::shape::sorted_buffer_entry_bytes(23, w.value_bytes()) as u64;
            Some((design.flush_bytes() / entry.max(1) / 4).max(1))
        }
        Pace::Free => None,
    }
}
