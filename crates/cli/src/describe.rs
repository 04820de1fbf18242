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
