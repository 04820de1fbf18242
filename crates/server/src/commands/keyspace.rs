//! Keyspace commands: SCAN, KEYS, RANGE (our ordered scan) and FLUSHALL.

use super::*;

impl Db {
    /// User keys from `after` (exclusive), up to `limit`, skipping internal keys.
    pub(super) fn user_keys(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<KeyValue>, Reply> {
        let mut out = Vec::new();
        let mut cursor: Option<Vec<u8>> = after.map(|a| a.to_vec());
        loop {
            let batch = match &cursor {
                Some(c) => self.engine.scan(
                    (
                        std::ops::Bound::Excluded(c.clone()),
                        std::ops::Bound::Unbounded,
                    ),
                    4096,
                ),
                None => self.engine.scan(.., 4096),
            }
            .map_err(engine_err)?;
            let done = batch.len() < 4096;
            for (k, v) in batch {
                cursor = Some(k.clone());
                if k.starts_with(INTERNAL) {
                    continue;
                }
                out.push((k, v));
                if out.len() >= limit {
                    return Ok(out);
                }
            }
            if done {
                return Ok(out);
            }
        }
    }

    pub(super) fn scan_cmd(&self, a: &[Vec<u8>]) -> Reply {
        let cursor = &a[0];
        let after = if cursor.as_slice() == b"0" {
            None
        } else {
            match hex_decode(cursor) {
                Some(k) => Some(k),
                None => return Reply::err("ERR invalid cursor"),
            }
        };
        let mut pattern: Option<Vec<u8>> = None;
        let mut count = 10usize;
        let mut i = 1;
        while i + 1 < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "MATCH" => pattern = Some(a[i + 1].clone()),
                "COUNT" => match int_arg(&a[i + 1]) {
                    Some(c) if c > 0 => count = c as usize,
                    _ => return Reply::err("ERR value is not an integer or out of range"),
                },
                "TYPE" => {}
                _ => return Reply::err("ERR syntax error"),
            }
            i += 2;
        }
        if i != a.len() {
            return Reply::err("ERR syntax error");
        }
        let keys = match self.user_keys(after.as_deref(), count) {
            Ok(k) => k,
            Err(r) => return r,
        };
        let next = if keys.len() < count {
            b"0".to_vec()
        } else {
            hex_encode(&keys[keys.len() - 1].0).into_bytes()
        };
        let matched = keys
            .into_iter()
            .filter(|(k, _)| pattern.as_ref().is_none_or(|p| store::glob(p, k)))
            .map(|(k, _)| Reply::bulk(k))
            .collect();
        Reply::Array(Some(vec![Reply::bulk(next), Reply::Array(Some(matched))]))
    }

    /// KEYS pattern: the matching keys, read a batch at a time, each batch's values dropped before the next
    /// is read: what it holds is its reply, not the keyspace's values.
    pub(super) fn keys(&self, pattern: &[u8]) -> Reply {
        const BATCH: usize = 4096;
        let mut matched = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let batch = match self.user_keys(after.as_deref(), BATCH) {
                Ok(b) => b,
                Err(r) => return r,
            };
            let done = batch.len() < BATCH;
            after = batch.last().map(|(k, _)| k.clone());
            matched.extend(
                batch
                    .into_iter()
                    .filter(|(k, _)| store::glob(pattern, k))
                    .map(|(k, _)| Reply::bulk(k)),
            );
            if done {
                return Reply::Array(Some(matched));
            }
        }
    }

    /// RANGE start end [LIMIT n]: string entries with start ≤ key < end (end "+" = no end), in key order, as a
    /// flat array of key, value.
    pub(super) fn range(&self, a: &[Vec<u8>]) -> Reply {
        let mut limit = 1000usize;
        if a.len() == 4 && a[2].eq_ignore_ascii_case(b"LIMIT") {
            match int_arg(&a[3]) {
                Some(n) if n > 0 => limit = n as usize,
                _ => return Reply::err("ERR value is not an integer or out of range"),
            }
        } else if a.len() != 2 {
            return Reply::err("ERR syntax error: RANGE start end [LIMIT n]");
        }
        let start = a[0].clone();
        let entries = if a[1].as_slice() == b"+" {
            self.engine.scan(start.., usize::MAX)
        } else {
            self.engine.scan(start..a[1].clone(), usize::MAX)
        };
        let entries = tryr!(entries);
        let mut out = Vec::new();
        for (k, v) in entries {
            if k.starts_with(INTERNAL) || v.first() != Some(&STRING) {
                continue;
            }
            out.push(Reply::bulk(k));
            out.push(Reply::bulk(v[1..].to_vec()));
            if out.len() / 2 >= limit {
                break;
            }
        }
        Reply::Array(Some(out))
    }

    pub(super) fn flushall(&self) -> Reply {
        loop {
            let batch = tryr!(self.engine.scan(.., 4096));
            if batch.is_empty() {
                return Reply::ok();
            }
            for (k, _) in batch {
                tryr!(self.engine.delete(&k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosine_engine::{Engine, Options, SyncMode};
    use std::sync::Arc;

    fn cmd(db: &Db, words: &[&str]) -> Reply {
        let args: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        db.execute(&args).0
    }

    #[test]
    fn keys_reads_the_keyspace_in_batches_and_answers_every_match() {
        let dir = tempfile::tempdir().unwrap();
        let design = cosine_engine::Design::rocksdb_like(1 << 20, 1 << 16, 1 << 20);
        let engine = Engine::open_with(dir.path(), &design, Options::with_sync(SyncMode::Never));
        let db = Db::new(Arc::new(engine.unwrap()), design);
        // more keys than a batch, a hash among them (its fields are internal keys, not listed)
        for i in 0..9_000 {
            let key = format!("{}:{i:05}", if i % 3 == 0 { "odd" } else { "user" });
            assert_eq!(cmd(&db, &["SET", &key, "v"]), Reply::ok());
        }
        cmd(&db, &["HSET", "user:h", "f", "1"]);
        let count = |r: Reply| match r {
            Reply::Array(Some(v)) => v.len(),
            other => panic!("{other:?}"),
        };
        assert_eq!(count(cmd(&db, &["KEYS", "odd:*"])), 3_000);
        assert_eq!(count(cmd(&db, &["KEYS", "user:*"])), 6_001);
        assert_eq!(count(cmd(&db, &["KEYS", "*"])), 9_001);
        assert_eq!(count(cmd(&db, &["KEYS", "none*"])), 0);
    }
}
