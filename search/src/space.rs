//! The size of the search space (Cosine Section 5 and MODEL.md §6.2, §10.1): designs per VM
//! |Ω| = T × K × Z × η / ε, hardware configurations as multisets of VMs, and the product.

/// Binomial coefficient C(n, k) as f64 (exact for the sizes used here).
pub fn binomial(n: u64, k: u64) -> f64 {
    let k = k.min(n - k.min(n));
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Hardware configurations of one provider: non-empty multisets of at most `max_machines` VMs over
/// `vm_types` types, C(m + k, k) − 1.
pub fn hardware_configurations(vm_types: u64, max_machines: u64) -> f64 {
    binomial(max_machines + vm_types, vm_types) - 1.0
}

/// Designs per VM: T_max × K_max × Z_max (× η / ε when those are searched too).
pub fn designs_per_vm(t_max: u64, k_max: u64, z_max: u64, cores: u64, epsilon: Option<f64>) -> f64 {
    let base = (t_max * k_max * z_max) as f64;
    match epsilon {
        Some(e) => base * cores as f64 / e,
        None => base,
    }
}

/// The space of one provider: m configurations, each with a design per VM type present; the paper's bound
/// m × |Ω|^k.
pub fn total_space(configurations: f64, designs_per_vm: f64, vm_types: u64) -> f64 {
    configurations * designs_per_vm.powi(vm_types as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_cardinality_example() {
        // MODEL.md §10.1: $50K on AWS with 6 VM types: 74,612 = C(22, 6) − 1 multisets of at most 16 machines
        assert_eq!(hardware_configurations(6, 16), 74_612.0);
        // T × K × Z = 32 · 31 · 31 = 30,752 (the paper's "/ε" is missing from its own figure)
        assert_eq!(designs_per_vm(32, 31, 31, 1, None), 30_752.0);
        // total 74,612 · 30,752^6 ≈ 6.3 × 10^31
        let total = total_space(74_612.0, 30_752.0, 6);
        assert!((total / 6.3e31 - 1.0).abs() < 0.01, "{total:e}");
    }
}
