//! The manifest: the durable description of the tree (which files form which runs of which level), the
//! design, and the oldest log segment still needed. Rewritten whole and replaced atomically
//! (write `MANIFEST.tmp`, fsync, rename over `MANIFEST`, fsync the directory).
//!
//! Encoding: `[u32 crc32c of the JSON][u32 JSON length][JSON]`.

use crate::error::{io, Error, Result};
use crate::storage::Storage;
use cosine_design::Design;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format version of the manifest (and so of the database directory).
pub const MANIFEST_FORMAT: u32 = 3;

/// The oldest format this engine still opens. Format 2 adds write batches logged as one record (kind 2), and
/// format 3 the log's sync marks (kind 3): an engine that reads an older format would report such a log as
/// corrupt, so it is told the database is newer.
pub const OLDEST_MANIFEST_FORMAT: u32 = 1;

/// A run as recorded: its id and its file ids in key order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run id.
    pub id: u64,
    /// File ids in key order.
    pub files: Vec<u64>,
}

/// The manifest's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version.
    pub format: u32,
    /// The design the tree was last written with.
    pub design: Design,
    /// Next id for files, runs and log segments.
    pub next_id: u64,
    /// Highest sequence number stored in runs.
    pub last_seq: u64,
    /// Oldest log segment whose records are not all in runs.
    pub log_number: u64,
    /// Levels 1..: runs newest first.
    pub levels: Vec<Vec<RunRecord>>,
}

/// Path of the manifest.
pub fn path(dir: &Path) -> std::path::PathBuf {
    dir.join("MANIFEST")
}

/// Writes the manifest atomically.
pub fn store(storage: &Storage, dir: &Path, m: &Manifest) -> Result<()> {
    let json =
        serde_json::to_vec(m).map_err(|e| Error::Poisoned(format!("manifest encoding: {e}")))?;
    let mut bytes = Vec::with_capacity(json.len() + 8);
    bytes.extend_from_slice(&crc32c::crc32c(&json).to_le_bytes());
    bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&json);
    let dst = path(dir);
    storage.replace(&dst, &bytes).map_err(io(&dst))
}

/// Reads the manifest, if the directory has one.
pub fn load(storage: &Storage, dir: &Path) -> Result<Option<Manifest>> {
    let p = path(dir);
    let bytes = match storage.read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Io { path: p, source: e }),
    };
    let bad = |offset: u64, reason: &str| Error::Corruption {
        file: p.clone(),
        offset,
        reason: reason.to_string(),
    };
    if bytes.len() < 8 {
        return Err(bad(0, "manifest shorter than its header"));
    }
    let crc = u32::from_le_bytes(bytes[0..4].try_into().unwrap_or([0; 4]));
    let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap_or([0; 4])) as usize;
    let json = bytes
        .get(8..8 + len)
        .ok_or_else(|| bad(4, "manifest truncated"))?;
    if crc32c::crc32c(json) != crc || bytes.len() != 8 + len {
        return Err(bad(0, "manifest checksum mismatch"));
    }
    let m: Manifest = serde_json::from_slice(json)
        .map_err(|e| bad(8, &format!("manifest does not decode: {e}")))?;
    if !(OLDEST_MANIFEST_FORMAT..=MANIFEST_FORMAT).contains(&m.format) {
        return Err(Error::Incompatible {
            dir: dir.to_path_buf(),
            reason: format!(
                "manifest format {} (this engine reads {OLDEST_MANIFEST_FORMAT} to {MANIFEST_FORMAT})",
                m.format
            ),
        });
    }
    Ok(Some(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemFs;

    fn manifest(format: u32) -> Manifest {
        Manifest {
            format,
            design: Design::rocksdb_like(1 << 20, 1 << 20, 1 << 20),
            next_id: 7,
            last_seq: 3,
            log_number: 2,
            levels: vec![vec![RunRecord {
                id: 5,
                files: vec![4],
            }]],
        }
    }

    #[test]
    fn older_formats_open_and_newer_ones_are_refused() {
        let storage = Storage::new(MemFs::new());
        let dir = Path::new("/");
        assert_eq!(load(&storage, dir).unwrap(), None);
        for format in OLDEST_MANIFEST_FORMAT..=MANIFEST_FORMAT {
            store(&storage, dir, &manifest(format)).unwrap();
            assert_eq!(load(&storage, dir).unwrap(), Some(manifest(format)));
        }
        store(&storage, dir, &manifest(MANIFEST_FORMAT + 1)).unwrap();
        assert!(matches!(
            load(&storage, dir),
            Err(Error::Incompatible { .. })
        ));
    }
}
