//! A memory cgroup for the benchmark's cells and the profile's reads under memory pressure: v1 (`/sys/fs/cgroup/memory/<name>/memory.limit_in_bytes`) or
//! v2 (`/sys/fs/cgroup/<name>/memory.max`), whichever the machine offers. The page cache of the files a cell
//! writes is charged to the cgroup too, so with the data larger than the cap, reads reach the device.

use std::io::{Error, Result};
use std::path::{Path, PathBuf};

/// Which cgroup interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// A memory cgroup this process made (removed by [`Cgroup::remove`]).
pub struct Cgroup {
    path: PathBuf,
    version: Version,
}

const V1_ROOT: &str = "/sys/fs/cgroup/memory";
const V2_ROOT: &str = "/sys/fs/cgroup";

fn write(path: &Path, value: &str) -> Result<()> {
    std::fs::write(path, value).map_err(|e| {
        Error::new(
            e.kind(),
            format!("cannot write {value} to {}: {e}", path.display()),
        )
    })
}

impl Cgroup {
    /// Makes a cgroup named `<prefix>-<pid>` capped at `bytes` (memory and, where the kernel accounts it,
    /// swap).
    pub fn create(prefix: &str, bytes: u64) -> Result<Cgroup> {
        let name = format!("{prefix}-{}", std::process::id());
        let v1 = Path::new(V1_ROOT).join("memory.limit_in_bytes").exists();
        let v2 = std::fs::read_to_string(Path::new(V2_ROOT).join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"));
        let (root, version) = match (v1, v2) {
            (true, _) => (V1_ROOT, Version::V1),
            (false, true) => (V2_ROOT, Version::V2),
            _ => {
                return Err(Error::other(format!(
                    "cannot make a memory cgroup: neither {V1_ROOT} (v1) nor a v2 hierarchy with the memory controller at {V2_ROOT} is available"
                )))
            }
        };
        let path = Path::new(root).join(name);
        std::fs::create_dir(&path).map_err(|e| {
            Error::new(
                e.kind(),
                format!(
                    "cannot make a memory cgroup at {} (run as root, or where the cgroup file system is writable): {e}",
                    path.display()
                ),
            )
        })?;
        let cg = Cgroup { path, version };
        match version {
            Version::V1 => {
                write(&cg.path.join("memory.limit_in_bytes"), &bytes.to_string())?;
                // without swap accounting the file is missing; with it, no swapping past the cap either
                let memsw = cg.path.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    write(&memsw, &bytes.to_string())?;
                }
            }
            Version::V2 => {
                write(&cg.path.join("memory.max"), &bytes.to_string())?;
                let swap = cg.path.join("memory.swap.max");
                if swap.exists() {
                    write(&swap, "0")?;
                }
            }
        }
        Ok(cg)
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Resets the peak usage (v1; v2's memory.peak cannot be reset on older kernels and is then the peak over
    /// every cell so far).
    pub fn reset_peak(&self) -> Result<()> {
        if self.version == Version::V1 {
            write(&self.path.join("memory.max_usage_in_bytes"), "0")?;
        }
        Ok(())
    }

    /// Peak usage in bytes (page cache included) since the last reset.
    pub fn peak(&self) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        };
        std::fs::read_to_string(self.path.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Processes the OOM killer has killed in this cgroup so far.
    pub fn oom_kills(&self) -> u64 {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        std::fs::read_to_string(self.path.join(file))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            })
            .unwrap_or(0)
    }

    /// Removes the cgroup (once no process is left in it).
    pub fn remove(self) {
        if self.version == Version::V1 {
            let _ = std::fs::write(self.path.join("memory.force_empty"), "0");
        }
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// Moves the calling process into the cgroup at `path` (the first thing a cell does, before it allocates).
pub fn join(path: &Path) -> Result<()> {
    write(&path.join("cgroup.procs"), &std::process::id().to_string())
}

/// The memory cgroup the calling process is in now (to go back to after [`join`]), where it can be read.
pub fn current() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "memory") {
            return Some(Path::new(V1_ROOT).join(path.trim_start_matches('/')));
        }
        if controllers.is_empty() {
            return Some(Path::new(V2_ROOT).join(path.trim_start_matches('/')));
        }
    }
    None
}
