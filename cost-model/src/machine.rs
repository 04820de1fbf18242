//! What a machine can deliver (the physical throughput model, the default): a VM's operations a second are
//! bounded by its volume (the requests an operation makes against the volume's IOPS, the bytes it moves
//! against its bandwidth), by its cores (the CPU an operation costs, spread over η cores by Amdahl's law with
//! φ: Eq. 2 on CPU work only), and by the requests the engine keeps in flight (Little's law: each in-flight
//! request takes an operation's CPU and its device reads' latency). Cores never make a disk faster. The
//! paper's Eq. 3 (I/O time divided by g(φ, η)) is [`crate::cpu::paper_eq3_seconds`], kept to reproduce the
//! paper.
//!
//! Also what a machine holds: a VM's memory less a reserve for the operating system and the engine's own
//! overhead ([`Reserve`]), and the time a design's write buffer takes to recover at the volume's bandwidth
//! ([`recovery_seconds`]).

use crate::cpu::speedup;
use crate::requests::OpIo;
use serde::{Deserialize, Serialize};

const MIB: f64 = 1024.0 * 1024.0;

/// How the search turns a design's I/Os into time on a VM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThroughputModel {
    /// Within the machine's physical limits ([`delivered`]), a VM's memory less its reserve, a write buffer
    /// that recovers within a bound: the default.
    #[default]
    Physical,
    /// The paper's Eq. 3 (I/O time over g(φ, η), plus a CPU floor the same for every system), the VM's whole
    /// memory to the design, no recovery bound: to reproduce the paper.
    Paper,
}

impl ThroughputModel {
    /// The name `--throughput` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            ThroughputModel::Physical => "physical",
            ThroughputModel::Paper => "paper",
        }
    }

    /// The model by its name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "physical" => Some(ThroughputModel::Physical),
            "paper" | "eq3" => Some(ThroughputModel::Paper),
            _ => None,
        }
    }
}

/// The physical limits of one VM and its volume, as the model prices them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Cores (η).
    pub vcpus: u32,
    /// Requests a second the volume serves at most (its IOPS, within the VM's cap).
    pub iops: f64,
    /// MiB a second the volume moves at most (within the VM's cap).
    pub mibps: f64,
    /// Seconds one random read takes at the device when it is not queued (its latency at queue depth 1).
    pub read_latency_s: f64,
    /// Requests the engine keeps in flight at once: its threads that each wait on one read.
    pub in_flight: f64,
    /// Bytes of page cache the system keeps for the engine's files besides what the design leaves unused (a
    /// memory cgroup's allowance for them; 0 for a cloud VM, whose reserve the model does not count on).
    #[serde(default)]
    pub page_cache_bytes: f64,
}

impl Machine {
    /// Requests in flight the volume needs to reach its IOPS (Little's law: IOPS × latency).
    pub fn in_flight_for_iops(&self) -> f64 {
        self.iops * self.read_latency_s
    }
}

/// Which limit decides a machine's operations a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The volume's IOPS.
    Iops,
    /// The volume's bandwidth.
    Bandwidth,
    /// The cores.
    Cpu,
    /// The requests the engine keeps in flight (each waits on the device's latency).
    InFlight,
}

impl Bound {
    /// A short name for output.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Iops => "IOPS",
            Bound::Bandwidth => "bandwidth",
            Bound::Cpu => "CPU",
            Bound::InFlight => "requests in flight",
        }
    }
}

/// What a machine delivers for one operation's work: its operations a second, what bounds them, each limit,
/// and how much of the volume they use.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delivered {
    /// Operations a second (the least of the limits).
    pub ops_per_s: f64,
    /// The limit that decides it.
    pub bound: Bound,
    /// Operations a second the volume's IOPS allow.
    pub iops_limit: f64,
    /// Operations a second the volume's bandwidth allows.
    pub bandwidth_limit: f64,
    /// Operations a second the cores allow.
    pub cpu_limit: f64,
    /// Operations a second the requests in flight allow.
    pub in_flight_limit: f64,
    /// Seconds one operation takes when nothing queues: its CPU and its random reads' latency.
    pub op_latency_s: f64,
    /// Share of the volume's IOPS the operations use (at most 1).
    pub iops_used: f64,
    /// Share of the volume's bandwidth the operations use (at most 1).
    pub bandwidth_used: f64,
}

/// What `machine` delivers for operations that each make the requests `io` and cost `cpu_s` CPU seconds on one
/// core, with a workload φ of `phi`: the least of the volume's IOPS over the requests an operation makes, its
/// bandwidth over the bytes, the cores' g(φ, η) over the CPU, and the requests in flight over the time each
/// takes (its CPU and its random reads that reach the device, one after another).
pub fn delivered(io: &OpIo, cpu_s: f64, phi: f64, machine: &Machine) -> Delivered {
    let per = |capacity: f64, demand: f64| {
        if demand > 0.0 {
            capacity / demand
        } else {
            f64::INFINITY
        }
    };
    let iops_limit = per(machine.iops, io.requests());
    let bandwidth_limit = per(machine.mibps * MIB, io.bytes());
    let cpu_limit = per(speedup(phi, machine.vcpus as f64), cpu_s);
    let op_latency_s = cpu_s + io.device_reads() * machine.read_latency_s;
    let in_flight_limit = per(machine.in_flight, op_latency_s);
    let (ops_per_s, bound) = [
        (iops_limit, Bound::Iops),
        (bandwidth_limit, Bound::Bandwidth),
        (cpu_limit, Bound::Cpu),
        (in_flight_limit, Bound::InFlight),
    ]
    .into_iter()
    .fold((f64::INFINITY, Bound::Cpu), |best, (x, b)| {
        if x < best.0 {
            (x, b)
        } else {
            best
        }
    });
    let used = |capacity: f64, demand: f64| {
        if capacity > 0.0 && ops_per_s.is_finite() {
            (ops_per_s * demand / capacity).min(1.0)
        } else {
            0.0
        }
    };
    Delivered {
        ops_per_s,
        bound,
        iops_limit,
        bandwidth_limit,
        cpu_limit,
        in_flight_limit,
        op_latency_s,
        iops_used: used(machine.iops, io.requests()),
        bandwidth_used: used(machine.mibps * MIB, io.bytes()),
    }
}

/// The engine's memory beyond its design's M on this project's machine, (bytes, share of M): what
/// `cosine profile --memory 268435456` measured (docs/profile/machine.json, `engine_overhead`): resident memory
/// beyond the structures. heap bytes at designs of 32 and 128 MiB (7.4 and 26.2 MiB: mostly the frozen
/// buffers' memory the allocator keeps after a flush), a line through them.
pub const ENGINE_OVERHEAD: (f64, f64) = (ENGINE_OVERHEAD_BYTES, ENGINE_OVERHEAD_SHARE);
const ENGINE_OVERHEAD_BYTES: f64 = 1.23e6;
const ENGINE_OVERHEAD_SHARE: f64 = 0.196;

/// The memory a VM keeps outside the design's M: the operating system's (a fixed part and a share of the VM's
/// memory) and the engine's own beyond its design (the process, its threads and connections: a fixed part
/// and a share of the design's memory, measured as resident memory less design memory at two design sizes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reserve {
    /// Bytes the operating system keeps whatever the VM's size.
    pub os_bytes: f64,
    /// Share of the VM's memory the operating system keeps besides (its page tables, buffers, agents).
    pub os_share: f64,
    /// Bytes the engine's process holds beyond its design whatever the design's size.
    pub engine_bytes: f64,
    /// Bytes the engine holds beyond its design per byte of design memory (allocator slack, block buffers).
    pub engine_share: f64,
}

impl Reserve {
    /// Memory a design gets on a VM of `vm_bytes`: what is left once the operating system's share and the
    /// engine's overhead (which grows with the design) are set aside; 0 when nothing is.
    pub fn design_bytes(&self, vm_bytes: u64) -> u64 {
        let left = vm_bytes as f64 * (1.0 - self.os_share) - self.os_bytes - self.engine_bytes;
        (left / (1.0 + self.engine_share)).max(0.0).floor() as u64
    }

    /// Bytes a VM of `vm_bytes` keeps for the operating system and the engine's overhead.
    pub fn reserved_bytes(&self, vm_bytes: u64) -> u64 {
        vm_bytes.saturating_sub(self.design_bytes(vm_bytes))
    }
}

/// Seconds a restart takes to bring back a design whose write buffer is `buffer_bytes`, holding entries of a
/// `key`-byte key and a `value`-byte value: the log behind both write buffers read at the volume's bandwidth,
/// each entry inserted again (`insert_cpu_s` a core), and the frozen buffer flushed (its run written at the
/// volume's bandwidth) before writes run at speed again. The log holds what the buffers hold: M_B over what
/// the buffer charges an entry, each as a log record.
pub fn recovery_seconds(
    buffer_bytes: u64,
    key: u64,
    value: u64,
    insert_cpu_s: f64,
    machine: &Machine,
) -> f64 {
    let per_entry = cosine_design::shape::sorted_buffer_entry_bytes(key as usize, value as usize);
    let entries = buffer_bytes as f64 / per_entry.max(1) as f64;
    let log = entries * cosine_design::shape::log_write_bytes(key as usize, value as usize) as f64;
    let frozen = entries / 2.0 * (key + value) as f64;
    let bandwidth = (machine.mibps * MIB).max(1.0);
    (log + frozen) / bandwidth + entries * insert_cpu_s
}

/// The largest write buffer (M_B, both buffers) whose recovery on `machine` takes at most `bound_s` seconds
/// ([`recovery_seconds`], which grows linearly with the buffer).
pub fn max_recoverable_buffer(
    bound_s: f64,
    key: u64,
    value: u64,
    insert_cpu_s: f64,
    machine: &Machine,
) -> u64 {
    const PROBE: u64 = 1 << 30;
    let per_gib = recovery_seconds(PROBE, key, value, insert_cpu_s, machine);
    if !(per_gib > 0.0) {
        return u64::MAX;
    }
    (bound_s / per_gib * PROBE as f64).clamp(0.0, u64::MAX as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            vcpus: 16,
            iops: 20_000.0,
            mibps: 1_000.0,
            read_latency_s: 1e-3,
            in_flight: 64.0,
            page_cache_bytes: 0.0,
        }
    }

    fn reads(n: f64) -> OpIo {
        OpIo {
            random_reads: n,
            sequential_blocks: 0.0,
            block_bytes: 16_384.0,
            log_bytes: 0.0,
            cached_share: 0.0,
            run_probes: 0.0,
        }
    }

    #[test]
    fn cores_never_make_the_disk_faster() {
        // 0.3 reads an operation on 20,000 IOPS: at most 66,667 operations a second, on 2 cores or 96
        let io = reads(0.3);
        for vcpus in [2, 16, 96] {
            let m = Machine {
                vcpus,
                in_flight: 1e9,
                ..machine()
            };
            let d = delivered(&io, 1e-6, 0.99, &m);
            assert!(d.ops_per_s <= 20_000.0 / 0.3 + 1e-6, "{vcpus}: {d:?}");
            assert!(d.iops_used <= 1.0);
        }
        // and the paper's Eq. 3 divides the I/O time by g: 16 cores at φ = 0.9 read 6.4x faster
        let eq3 = crate::cpu::paper_eq3_seconds(1.0, 0.3, 20_000.0, 0.9, 16.0);
        assert!(1.0 / eq3 > 3.0 * 20_000.0 / 0.3);
    }

    #[test]
    fn each_limit_binds_where_it_is_least() {
        let m = machine();
        // IOPS: 1 read an op, nothing else slow
        let d = delivered(
            &reads(1.0),
            1e-6,
            1.0,
            &Machine {
                in_flight: 1e6,
                ..m
            },
        );
        assert_eq!(d.bound, Bound::Iops);
        assert!((d.ops_per_s - 20_000.0).abs() < 1e-6 && (d.iops_used - 1.0).abs() < 1e-12);
        // bandwidth: big sequential streams (64 blocks of 16 KiB = 4 requests an op, 1 MiB)
        let seq = OpIo {
            random_reads: 0.0,
            sequential_blocks: 64.0,
            block_bytes: 16_384.0,
            log_bytes: 0.0,
            cached_share: 0.0,
            run_probes: 0.0,
        };
        let d = delivered(&seq, 1e-6, 1.0, &m);
        assert_eq!(d.bound, Bound::Bandwidth);
        assert!((d.ops_per_s - 1_000.0).abs() < 1e-6);
        // CPU: no I/O, 10 µs an op on 16 cores at φ = 1
        let d = delivered(&OpIo::default(), 10e-6, 1.0, &m);
        assert_eq!(d.bound, Bound::Cpu);
        assert!((d.ops_per_s - 1.6e6).abs() < 1e-3);
        // in flight: 4 readers, 2 reads of 1 ms each
        let d = delivered(
            &reads(2.0),
            0.0,
            1.0,
            &Machine {
                in_flight: 4.0,
                ..m
            },
        );
        assert_eq!(d.bound, Bound::InFlight);
        assert!((d.ops_per_s - 2_000.0).abs() < 1e-6);
        assert!((m.in_flight_for_iops() - 20.0).abs() < 1e-9);
    }

    #[test]
    fn the_reserve_leaves_the_design_less_than_the_vm() {
        let r = Reserve {
            os_bytes: 512.0 * MIB,
            os_share: 0.02,
            engine_bytes: 16.0 * MIB,
            engine_share: 0.05,
        };
        for gib in [1u64, 16, 128, 768] {
            let vm = gib << 30;
            let d = r.design_bytes(vm);
            assert!(d < vm);
            let overhead = r.engine_bytes + r.engine_share * d as f64;
            let os = r.os_bytes + r.os_share * vm as f64;
            assert!(
                (d as f64 + overhead + os - vm as f64).abs() < 2.0,
                "{gib} GiB: {d} + {overhead} + {os}"
            );
            assert_eq!(r.reserved_bytes(vm) + d, vm);
        }
        assert_eq!(r.design_bytes(100 << 20), 0);
    }

    #[test]
    fn recovery_grows_with_the_buffer_and_shrinks_with_bandwidth() {
        let m = machine();
        let small = recovery_seconds(64 << 20, 16, 1008, 2e-6, &m);
        let big = recovery_seconds(128 << 30, 16, 1008, 2e-6, &m);
        assert!(small < 1.0 && big > 60.0, "{small} {big}");
        let slow = recovery_seconds(64 << 20, 16, 1008, 2e-6, &Machine { mibps: 125.0, ..m });
        assert!(slow > small);
        let most = max_recoverable_buffer(60.0, 16, 1008, 2e-6, &m);
        let at = recovery_seconds(most, 16, 1008, 2e-6, &m);
        assert!((at - 60.0).abs() < 1e-6, "{most} bytes take {at} s");
    }
}
