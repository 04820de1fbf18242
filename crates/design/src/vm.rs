//! `Vm`: one cloud virtual-machine type, as the search prices and shards over it.

use crate::error::{DesignError, Result};
use serde::{Deserialize, Serialize};

/// A VM type: vCPUs, memory and hourly price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vm {
    /// Provider id ("aws", "gcp", "azure").
    pub provider: String,
    /// Instance type name, e.g. "r5d.2xlarge".
    pub name: String,
    /// Virtual CPUs (η for the Amdahl model).
    pub vcpus: u32,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// On-demand price per hour in USD.
    pub hourly_usd: f64,
}

impl Vm {
    /// Checks the VM has CPUs, memory and a non-negative finite price.
    pub fn validate(&self) -> Result<()> {
        if self.vcpus == 0 {
            return Err(DesignError::Zero("vcpus"));
        }
        if self.memory_bytes == 0 {
            return Err(DesignError::Zero("memory_bytes"));
        }
        if !(self.hourly_usd.is_finite() && self.hourly_usd >= 0.0) {
            return Err(DesignError::OutOfRange {
                field: "hourly_usd",
                value: self.hourly_usd.to_string(),
                reason: "must be a non-negative price",
            });
        }
        Ok(())
    }

    /// Parses and validates a VM description.
    pub fn from_json(text: &str) -> Result<Self> {
        let vm: Vm = serde_json::from_str(text).map_err(|e| DesignError::Malformed {
            what: "vm",
            message: e.to_string(),
        })?;
        vm.validate()?;
        Ok(vm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_round_trip_and_validation() {
        let vm = Vm {
            provider: "aws".into(),
            name: "r5d.large".into(),
            vcpus: 2,
            memory_bytes: 16 << 30,
            hourly_usd: 0.144,
        };
        let text = serde_json::to_string(&vm).unwrap();
        assert_eq!(Vm::from_json(&text).unwrap(), vm);
        let bad = Vm { vcpus: 0, ..vm };
        assert!(bad.validate().is_err());
    }
}
