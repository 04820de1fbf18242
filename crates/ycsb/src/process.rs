//! What the OS says about this process: resident memory now and at its peak, and CPU seconds (Linux /proc).

/// Resident memory of this process in bytes (Linux /proc/self/status VmRSS).
pub fn resident_bytes() -> Option<u64> {
    status_kb("VmRSS:")
}

/// Peak resident memory of this process in bytes so far (Linux /proc/self/status VmHWM, the high-water mark).
pub fn peak_resident_bytes() -> Option<u64> {
    status_kb("VmHWM:")
}

/// CPU seconds this process (all its threads) has spent so far, in user and in kernel mode: /proc/self/stat's
/// utime and stime, in clock ticks of 1/100 s (Linux's USER_HZ on every architecture it exports to user space).
pub fn cpu_seconds() -> Option<(f64, f64)> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces: state is field 3,
    // utime field 14, stime field 15
    let rest = &s[s.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user as f64 / 100.0, system as f64 / 100.0))
}

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_seconds_grow_with_work_done() {
        let (user0, system0) = super::cpu_seconds().expect("/proc/self/stat");
        // spin until the user time has moved by a few ticks (a tick is 10 ms), at most 5 s of wall time
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while super::cpu_seconds().unwrap().0 < user0 + 0.05 && started.elapsed().as_secs() < 5 {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        let (user1, system1) = super::cpu_seconds().unwrap();
        assert!(user1 >= user0 + 0.05, "user {user0} -> {user1}");
        assert!(system1 >= system0);
    }
}
