//! What a phase measured: latency percentiles per operation type ([`OpReport`]), where the client threads'
//! time went ([`ClientTimes`]), and the phase's whole report ([`PhaseReport`]), which slices of one phase fold
//! into.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latency percentiles of one operation type, in microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OpReport {
    /// Operations.
    pub count: u64,
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Read-path blocks (data and index) per operation of this type, when the engine counts them per thread.
    pub read_ios: Option<f64>,
}

/// Where the client threads' time went, summed over the threads of a phase: on a CPU, waiting for a CPU, and
/// in all. What is left (the wall time less the two) the threads spent blocked: on the device, a lock (the
/// harness's own per-record lock among them: two threads writing one hot key take turns), a condition
/// variable, a write stall, a page fault, a sleep. The CPU is the client's as well as the engine's foreground
/// work (making values, checking reads).
///
/// (The kernel's per-thread block-I/O delay, `/proc/thread-self/stat` field 42 with `kernel.task_delayacct`,
/// would split the device off; on this machine's kernel (6.18) about one thread in three came back with the
/// system's uptime added to it, so it is not used.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ClientTimes {
    /// Seconds the threads lived through, each from its first operation to its last (summed).
    pub wall: f64,
    /// Seconds on a CPU, user and kernel (the scheduler's runtime, `/proc/thread-self/schedstat`).
    pub cpu: f64,
    /// Seconds runnable and waiting for a CPU (schedstat's run delay).
    pub runqueue: f64,
}

impl ClientTimes {
    /// The calling thread's totals so far (its wall field 0); `None` off Linux.
    pub fn of_this_thread() -> Option<ClientTimes> {
        let sched = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let mut f = sched.split_whitespace();
        let cpu_ns: u64 = f.next()?.parse().ok()?;
        let wait_ns: u64 = f.next()?.parse().ok()?;
        let slices: u64 = f.next()?.parse().ok()?;
        // (a kernel without scheduler statistics prints zeros, where a running thread has been put on a CPU
        // at least once: no figure rather than all of the time blocked)
        if slices == 0 {
            return None;
        }
        Some(ClientTimes {
            wall: 0.0,
            cpu: cpu_ns as f64 / 1e9,
            runqueue: wait_ns as f64 / 1e9,
        })
    }

    /// What was spent between `self` (earlier) and `later`, over `wall` seconds.
    pub(crate) fn until(&self, later: &ClientTimes, wall: f64) -> ClientTimes {
        ClientTimes {
            wall,
            cpu: later.cpu - self.cpu,
            runqueue: later.runqueue - self.runqueue,
        }
    }

    /// Both summed.
    pub fn plus(&self, o: &ClientTimes) -> ClientTimes {
        ClientTimes {
            wall: self.wall + o.wall,
            cpu: self.cpu + o.cpu,
            runqueue: self.runqueue + o.runqueue,
        }
    }

    /// The seconds left when the CPU and the run queue are taken from the wall time: blocked (on the device,
    /// a lock, a stall).
    pub fn blocked(&self) -> f64 {
        (self.wall - self.cpu - self.runqueue).max(0.0)
    }
}

/// What a phase measured.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseReport {
    /// Operations.
    pub operations: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Operations per second.
    pub throughput: f64,
    /// Per operation type: read, update, insert, scan, rmw.
    pub ops: Vec<(String, OpReport)>,
    /// Read-path block reads per operation.
    pub read_ios_per_op: Option<f64>,
    /// Flush and compaction block reads and writes per operation.
    pub background_ios_per_op: Option<f64>,
    /// Errors returned by the store.
    pub errors: u64,
    /// Wrong results: reads and scans whose answers contradict what was acknowledged (see
    /// [`verify`](crate::verify)).
    pub wrong: u64,
    /// The first wrong result, described.
    pub first_wrong: Option<String>,
    /// Records this phase inserted (a later phase continues after them: `CoreWorkload::inserted_before`).
    pub inserted: u64,
    /// Where the client threads' time went (`None` where the OS does not say).
    pub client: Option<ClientTimes>,
}

impl PhaseReport {
    /// Folds a later slice of the same phase into this one: counts, seconds, inserts and errors add up, and
    /// per-operation figures (I/Os, latency percentiles) become count-weighted means of the slices'. The
    /// percentiles are then approximate; the I/O means are exact.
    pub fn absorb(&mut self, other: PhaseReport) {
        let weigh = |a: Option<f64>, na: u64, b: Option<f64>, nb: u64| match (a, b) {
            (Some(a), Some(b)) if na + nb > 0 => {
                Some((a * na as f64 + b * nb as f64) / (na + nb) as f64)
            }
            (a, None) => a.filter(|_| nb == 0),
            (None, b) => b.filter(|_| na == 0),
            _ => None,
        };
        let (n0, n1) = (self.operations, other.operations);
        self.read_ios_per_op = weigh(self.read_ios_per_op, n0, other.read_ios_per_op, n1);
        self.background_ios_per_op = weigh(
            self.background_ios_per_op,
            n0,
            other.background_ios_per_op,
            n1,
        );
        for (name, o) in other.ops {
            match self.ops.iter_mut().find(|(n, _)| *n == name) {
                Some((_, mine)) => {
                    let (a, b) = (mine.count, o.count);
                    let mean =
                        |x: f64, y: f64| (x * a as f64 + y * b as f64) / (a + b).max(1) as f64;
                    mine.p50_us = mean(mine.p50_us, o.p50_us);
                    mine.p95_us = mean(mine.p95_us, o.p95_us);
                    mine.p99_us = mean(mine.p99_us, o.p99_us);
                    mine.read_ios = weigh(mine.read_ios, a, o.read_ios, b);
                    mine.count += b;
                }
                None => self.ops.push((name, o)),
            }
        }
        self.operations += n1;
        self.seconds += other.seconds;
        self.throughput = self.operations as f64 / self.seconds.max(1e-9);
        self.errors += other.errors;
        self.wrong += other.wrong;
        if self.first_wrong.is_none() {
            self.first_wrong = other.first_wrong;
        }
        self.inserted += other.inserted;
        self.client = self.client.zip(other.client).map(|(a, b)| a.plus(&b));
    }
}

/// A latency histogram in microseconds, 1 µs to 60 s, to 2 significant digits (1%: enough for p50-p99; at
/// 3 digits every client thread's five histograms took 0.7 MB, which the process's peak memory counts).
pub(crate) fn latency_histogram() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000, 2).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(ops: &[(&str, u64, f64)], seconds: f64, inserted: u64) -> PhaseReport {
        let total: u64 = ops.iter().map(|o| o.1).sum();
        let reads: f64 = ops.iter().map(|o| o.1 as f64 * o.2).sum();
        PhaseReport {
            operations: total,
            seconds,
            throughput: total as f64 / seconds,
            ops: ops
                .iter()
                .map(|&(n, count, io)| {
                    let o = OpReport {
                        count,
                        p50_us: io * 10.0,
                        p95_us: 0.0,
                        p99_us: 0.0,
                        read_ios: Some(io),
                    };
                    (n.to_string(), o)
                })
                .collect(),
            read_ios_per_op: Some(reads / total as f64),
            background_ios_per_op: None,
            errors: 1,
            wrong: 0,
            first_wrong: None,
            inserted,
            client: None,
        }
    }

    #[test]
    fn slices_of_a_phase_fold_into_one_report() {
        let mut a = report(&[("read", 300, 1.0), ("insert", 100, 0.0)], 2.0, 100);
        a.absorb(report(&[("read", 100, 3.0), ("scan", 50, 20.0)], 1.0, 0));
        assert_eq!((a.operations, a.errors, a.inserted), (550, 2, 100));
        assert!((a.throughput - 550.0 / 3.0).abs() < 1e-9);
        let read = &a.ops.iter().find(|o| o.0 == "read").unwrap().1;
        assert_eq!(read.count, 400);
        assert!((read.read_ios.unwrap() - 1.5).abs() < 1e-12);
        assert!((read.p50_us - 15.0).abs() < 1e-12);
        assert_eq!(a.ops.len(), 3);
        // the phase's mean is the mean over every operation of both slices
        let want = (300.0 * 1.0 + 100.0 * 3.0 + 50.0 * 20.0) / 550.0;
        assert!((a.read_ios_per_op.unwrap() - want).abs() < 1e-12);
        assert_eq!(a.background_ios_per_op, None);
    }
}
