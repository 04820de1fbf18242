//! How the command line describes things in words, shared by every command that prints them.

use cosine_design::Workload;

/// A workload's operation mix in words: each operation with a share above 0, as a percentage
/// ("lookup 50%, blind update 50%").
pub(crate) fn describe_mix(w: &Workload) -> String {
    w.mix
        .named()
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(n, v)| format!("{n} {:.0}%", v * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A count with thousands separators ("10,000,000").
pub(crate) fn count(n: f64) -> String {
    if !n.is_finite() {
        return format!("{n}");
    }
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Bytes in the largest binary unit that keeps the number at least 1 ("9.3 TiB", "512 MiB", "100 B").
pub(crate) fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v.abs() >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else if v.abs() >= 100.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A duration in the unit that reads best ("85 µs", "1.2 ms", "41 s", "7.5 min").
pub(crate) fn duration(s: f64) -> String {
    if !s.is_finite() {
        format!("{s}")
    } else if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_a_person_writes_them() {
        assert_eq!(count(10_000_000_000.0), "10,000,000,000");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(-1234.4), "-1,234");
        assert_eq!(bytes(10_240_000_000_000.0), "9.3 TiB");
        assert_eq!(bytes(512.0 * 1024.0 * 1024.0), "512 MiB");
        assert_eq!(bytes(100.0), "100 B");
        assert_eq!(duration(85e-6), "85 µs");
        assert_eq!(duration(0.0012), "1.20 ms");
        assert_eq!(duration(41.0), "41.0 s");
        assert_eq!(duration(450.0), "7.5 min");
    }
}
