//! A priced configuration (VM types and counts, each VM's design, cost, latency and throughput), the
//! continuum over configurations, and how much of a margin between two is φ.

use crate::designs::Scored;
use cosine_cloud_pricing::Quote;
use cosine_cost_model::cpu::speedup;
use cosine_cost_model::machine::{delivered, Machine};
use serde::Serialize;

/// One VM type's part of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Part {
    /// VM type.
    pub vm: String,
    /// Instances.
    pub count: u32,
    /// vCPUs of one.
    pub vcpus: u32,
    /// Memory of one, GiB.
    pub memory_gib: f64,
    /// Entries on one.
    pub entries_per_vm: u64,
    /// IOPS of one's volume.
    pub iops: f64,
    /// MiB a second one's volume moves.
    pub mibps: f64,
    /// Microseconds one random read takes at its volume when none is queued.
    pub read_latency_us: f64,
    /// Requests its engine keeps in flight (one per client thread waiting on a read).
    pub in_flight: f64,
    /// GiB of one's memory kept outside the design: the operating system's and the engine's overhead.
    pub reserved_gib: f64,
    /// GiB of page cache the system keeps for the engine's files besides what the design leaves unused.
    pub page_cache_gib: f64,
    /// The design each of them runs.
    pub design: Scored,
}

/// A priced and scored configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Provider id.
    pub provider: String,
    /// VM types and counts.
    pub parts: Vec<Part>,
    /// Monthly cost breakdown.
    pub cost: Quote,
    /// Seconds to run the workload's operations (slowest VM).
    pub latency_s: f64,
    /// Operations per second.
    pub throughput: f64,
}

impl Config {
    /// Monthly cost in USD.
    pub fn monthly_usd(&self) -> f64 {
        self.cost.total_usd
    }

    /// "2 x r5.large + 1 x r5.xlarge".
    pub fn describe(&self) -> String {
        self.parts
            .iter()
            .map(|p| format!("{} x {}", p.count, p.vm))
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// Operations per second of this configuration with each VM's design run at the workload φ `phi` in place
    /// of the φ it was priced with, its VMs, I/Os and volumes unchanged: under the physical model φ moves the
    /// cores' limit only (each VM is priced again, [`delivered`]); under the paper's Eq. 3 it divides a VM's
    /// I/O time and its CPU floor alike by g(φ, η), so each VM's latency scales by g(φ_own, η) / g(`phi`, η).
    /// The slowest VM sets the configuration's. [`margin_split`] uses it.
    pub fn throughput_at_phi(&self, phi: f64) -> f64 {
        let latency = self
            .parts
            .iter()
            .map(|p| match &p.design.delivered {
                Some(now) => {
                    let then = delivered(&p.design.requests, p.design.cpu_s, phi, &p.machine());
                    p.design.latency_s * now.ops_per_s / then.ops_per_s
                }
                None => {
                    let eta = p.vcpus as f64;
                    p.design.latency_s * speedup(p.design.phi, eta) / speedup(phi, eta)
                }
            })
            .fold(0.0, f64::max);
        if latency > 0.0 {
            self.throughput * self.latency_s / latency
        } else {
            f64::INFINITY
        }
    }
}

impl Part {
    /// The limits each VM of this part was priced with.
    pub fn machine(&self) -> Machine {
        Machine {
            vcpus: self.vcpus,
            iops: self.iops,
            mibps: self.mibps,
            read_latency_s: self.read_latency_us * 1e-6,
            in_flight: self.in_flight,
            page_cache_bytes: self.page_cache_gib * (1u64 << 30) as f64,
        }
    }
}

/// How much of one configuration's margin over another is φ (Cosine Eq. 2) and how much is everything else
/// (the I/Os an operation, the IOPS, the VMs' count and size, the money left unspent).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MarginSplit {
    /// `ours.throughput / theirs.throughput`: `phi × rest`.
    pub total: f64,
    /// Their configuration priced at our workload φ, ops/s.
    pub theirs_at_our_phi: f64,
    /// Our configuration priced at their workload φ, ops/s.
    pub ours_at_their_phi: f64,
    /// The factor φ makes: the geometric mean of the two orders of pricing, theirs at our φ
    /// (`theirs_at_our_phi / theirs.throughput`) and ours at theirs (`ours.throughput / ours_at_their_phi`),
    /// which differ because g(φ, η) depends on each side's vCPUs η.
    pub phi: f64,
    /// `total / phi`: everything but φ.
    pub rest: f64,
}

/// A margin of one configuration over another across the evidence for φ: each side priced at the ends of
/// its workload φ's measured range ([`cosine_cost_model::cpu::PhiLibrary::workload_phi_range`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MarginRange {
    /// Ours at the low end of our φ over theirs at the high end of theirs: the conservative margin.
    pub low: f64,
    /// Ours at the high end over theirs at the low end.
    pub high: f64,
}

/// The margin of `ours` over `theirs` as φ ranges over its evidence: `our_phi` and `their_phi` are each side's
/// (lowest, highest) workload φ.
pub fn margin_range(
    ours: &Config,
    our_phi: (f64, f64),
    theirs: &Config,
    their_phi: (f64, f64),
) -> MarginRange {
    MarginRange {
        low: ours.throughput_at_phi(our_phi.0) / theirs.throughput_at_phi(their_phi.1),
        high: ours.throughput_at_phi(our_phi.1) / theirs.throughput_at_phi(their_phi.0),
    }
}

/// Splits the margin of `ours` over `theirs` into φ and the rest ([`MarginSplit`]); None when either runs designs
/// of different φ on its VM types (no one φ to exchange) or a throughput is not finite and positive.
pub fn margin_split(ours: &Config, theirs: &Config) -> Option<MarginSplit> {
    let one_phi = |c: &Config| {
        let phi = c.parts.first()?.design.phi;
        c.parts.iter().all(|p| p.design.phi == phi).then_some(phi)
    };
    let (our_phi, their_phi) = (one_phi(ours)?, one_phi(theirs)?);
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !positive(ours.throughput) || !positive(theirs.throughput) {
        return None;
    }
    let theirs_at_our_phi = theirs.throughput_at_phi(our_phi);
    let ours_at_their_phi = ours.throughput_at_phi(their_phi);
    let total = ours.throughput / theirs.throughput;
    let phi =
        ((theirs_at_our_phi / theirs.throughput) * (ours.throughput / ours_at_their_phi)).sqrt();
    Some(MarginSplit {
        total,
        theirs_at_our_phi,
        ours_at_their_phi,
        phi,
        rest: total / phi,
    })
}

/// The continuum: configurations sorted by cost, keeping each one that is faster than every cheaper one.
pub fn frontier(mut configs: Vec<Config>) -> Vec<Config> {
    configs.sort_by(|a, b| {
        a.monthly_usd()
            .total_cmp(&b.monthly_usd())
            .then(a.latency_s.total_cmp(&b.latency_s))
    });
    let mut out: Vec<Config> = Vec::new();
    for c in configs {
        if out.last().is_none_or(|l| c.latency_s < l.latency_s) {
            if out
                .last()
                .is_some_and(|l| l.monthly_usd() == c.monthly_usd())
            {
                out.pop();
            }
            out.push(c);
        }
    }
    out
}

/// The fastest configuration of a frontier at or below `budget`.
pub fn best_within(frontier: &[Config], budget: f64) -> Option<&Config> {
    let i = frontier.partition_point(|c| c.monthly_usd() <= budget);
    i.checked_sub(1).map(|i| &frontier[i])
}
