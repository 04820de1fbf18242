//! The repository of measured runs: one JSON line per run, appended as each run ends, so a collection that is
//! stopped (or killed) resumes where it stopped. A torn last line (the process killed mid-write) is skipped on
//! reading and overwritten by the next append; any other line that does not parse is an error, never silently
//! dropped.

use crate::knobs::KnobValues;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a configuration came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The engine's defaults.
    Default,
    /// The analytical model's pick for the workload (Cosine's search at this memory).
    Model,
    /// Latin-hypercube sample.
    Lhs,
    /// A probe of a target workload (a repository configuration run on it).
    Probe,
    /// A candidate of the genetic search, measured to verify it.
    Tuned,
    /// Uniform random configuration (the random-search baseline).
    Random,
}

/// The machine a run was measured on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Host name.
    pub host: String,
    /// CPU model.
    pub cpu: String,
    /// Logical cores.
    pub cores: u32,
    /// Physical memory, bytes.
    pub memory_bytes: u64,
}

impl Machine {
    /// This machine (read once per process).
    pub fn here() -> Self {
        static HERE: std::sync::OnceLock<Machine> = std::sync::OnceLock::new();
        HERE.get_or_init(Self::read).clone()
    }

    fn read() -> Self {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpu = read("/proc/cpuinfo")
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map_or("unknown".into(), |s| s.trim().to_string());
        let memory_bytes = read("/proc/meminfo")
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|k| k.parse::<u64>().ok())
            .map_or(0, |k| k * 1024);
        Machine {
            host: read("/proc/sys/kernel/hostname").trim().to_string(),
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            memory_bytes,
        }
    }
}

/// What a run measured that a tuner optimises (RTune's external metrics, and the I/O count our engine is also
/// judged by).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Operations per second of the timed run.
    pub throughput: f64,
    /// Seconds of the timed run and of the settle after it that flushes and merges what it wrote (RTune's TIME,
    /// db_bench's run, counts the background work a run leaves too).
    pub seconds: f64,
    /// The 99th-percentile latency of the run's most frequent operation type, microseconds.
    pub p99_us: f64,
    /// Bytes flushed and merged to the device over the bytes the user wrote, in the timed run and its settle (1
    /// when the run wrote nothing).
    pub write_amplification: f64,
    /// Bytes on the device over the live data's bytes.
    pub space_amplification: f64,
    /// Device I/Os per operation of the run: read-path block reads plus flush and compaction blocks (engines
    /// that count them).
    pub ios_per_op: Option<f64>,
    /// Peak resident memory of the process, bytes.
    pub peak_resident_bytes: Option<u64>,
}

/// One measured run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The engine ("cosine", "rocksdb").
    pub engine: String,
    /// The engine's version.
    pub engine_version: String,
    /// Where it ran.
    pub machine: Machine,
    /// The workload's name.
    pub workload: String,
    /// The workload as run.
    pub workload_spec: cosine_ycsb::CoreWorkload,
    /// Engine memory budget, bytes.
    pub memory: u64,
    /// Seed of the request generators.
    pub seed: u64,
    /// Where the configuration came from.
    pub source: Source,
    /// The configuration's id: a hash of its knob values and the memory.
    pub config: String,
    /// The knob values.
    pub knobs: KnobValues,
    /// The engine's configuration in its own terms (our engine: the design.json).
    pub settings: serde_json::Value,
    /// The engine's internal metrics, each per operation of the load and run together (RTune's IM).
    pub metrics: BTreeMap<String, f64>,
    /// What the run measured (RTune's EM).
    pub outcome: Outcome,
    /// Seconds since the Unix epoch at the run's end.
    pub at: u64,
}

/// The id of a configuration: FNV-1a of the engine settings it runs with and the memory, as 16 hex digits.
pub fn config_id(settings: &serde_json::Value, memory: u64) -> String {
    let text = format!("{settings}|{memory}");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A repository directory: `runs.jsonl` inside it.
#[derive(Clone, Debug)]
pub struct Repository {
    dir: PathBuf,
}

impl Repository {
    /// The repository in `dir` (created on the first append).
    pub fn at(dir: impl AsRef<Path>) -> Self {
        Repository {
            dir: dir.as_ref().to_path_buf(),
        }
    }

    /// The runs file.
    pub fn file(&self) -> PathBuf {
        self.dir.join("runs.jsonl")
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.file().display().to_string(),
            source,
        }
    }

    /// Every run recorded (none when the repository does not exist yet).
    pub fn load(&self) -> Result<Vec<RunRecord>> {
        let path = self.file();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        let torn = !text.is_empty() && !text.ends_with('\n');
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<RunRecord>(line) {
                Ok(r) => out.push(r),
                // a line cut short by a kill: the last one, without its newline
                Err(_) if torn && i + 1 == lines.len() => {}
                Err(e) => {
                    return Err(Error::Corrupt {
                        path: path.display().to_string(),
                        line: i + 1,
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(out)
    }

    /// Appends a run (one line, written whole and synced), replacing a torn last line if there is one.
    pub fn append(&self, run: &RunRecord) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.io(e))?;
        let path = self.file();
        // drop a torn tail first, so the new line starts on a line of its own
        if let Ok(text) = std::fs::read(&path) {
            if !text.is_empty() && text.last() != Some(&b'\n') {
                let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| self.io(e))?;
                f.set_len(keep as u64).map_err(|e| self.io(e))?;
            }
        }
        let mut line = serde_json::to_string(run).map_err(|e| Error::Invalid(e.to_string()))?;
        line.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| self.io(e))?;
        f.write_all(line.as_bytes()).map_err(|e| self.io(e))?;
        f.sync_data().map_err(|e| self.io(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(workload: &str, config: &str) -> RunRecord {
        RunRecord {
            engine: "cosine".into(),
            engine_version: "0.1.0".into(),
            machine: Machine::here(),
            workload: workload.into(),
            workload_spec: cosine_ycsb::CoreWorkload::defaults(workload),
            memory: 1 << 20,
            seed: 1,
            source: Source::Lhs,
            config: config.into(),
            knobs: KnobValues::new(),
            settings: serde_json::Value::Null,
            metrics: [("a".to_string(), 1.5)].into_iter().collect(),
            outcome: Outcome::default(),
            at: 0,
        }
    }

    #[test]
    fn appends_and_reads_back_and_survives_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::at(dir.path().join("r"));
        assert!(repo.load().unwrap().is_empty());
        repo.append(&record("w1", "c1")).unwrap();
        repo.append(&record("w2", "c2")).unwrap();
        assert_eq!(repo.load().unwrap().len(), 2);
        // a kill mid-write leaves half a line
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(repo.file())
            .unwrap();
        f.write_all(b"{\"engine\":\"cos").unwrap();
        assert_eq!(repo.load().unwrap().len(), 2);
        repo.append(&record("w3", "c3")).unwrap();
        let runs = repo.load().unwrap();
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[2].workload, "w3");
        // a bad line in the middle is an error with its line number
        let text = std::fs::read_to_string(repo.file()).unwrap();
        std::fs::write(repo.file(), format!("garbage\n{text}")).unwrap();
        let e = repo.load().unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn config_ids_differ_by_settings_and_memory() {
        let a = serde_json::json!({"size_ratio": 10});
        let b = serde_json::json!({"size_ratio": 11});
        assert_ne!(config_id(&a, 1), config_id(&b, 1));
        assert_ne!(config_id(&a, 1), config_id(&a, 2));
        assert_eq!(config_id(&a, 1), config_id(&a.clone(), 1));
    }
}
