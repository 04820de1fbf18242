//! A priced configuration (VM types and counts, each VM's design, cost, latency and throughput), the
//! continuum over configurations, and how much of a margin between two is φ.

use crate::designs::Scored;
use cosine_cloud_pricing::Quote;
use cosine_cost_model::cpu::speedup;
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
    /// of the φ it was priced with, its VMs, I/Os and IOPS unchanged: Eq. 3 divides a VM's I/O time by
    /// g(φ, η), and so does the CPU floor the search adds to it, so each VM's latency scales by
    /// g(φ_own, η) / g(`phi`, η) and the slowest VM sets the configuration's. [`margin_split`] uses it.
    pub fn throughput_at_phi(&self, phi: f64) -> f64 {
        let latency = self
            .parts
            .iter()
            .map(|p| {
                let eta = p.vcpus as f64;
                p.design.latency_s * speedup(p.design.phi, eta) / speedup(phi, eta)
            })
            .fold(0.0, f64::max);
        if latency > 0.0 {
            self.throughput * self.latency_s / latency
        } else {
            f64::INFINITY
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
