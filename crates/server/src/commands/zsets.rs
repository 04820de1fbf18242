//! Sorted-set commands (ZADD, ZREM, ZCARD, ZRANGEBYSCORE): members kept in score order under internal keys.

use super::*;

impl Db {
    pub(super) fn zset_marker(&self, key: &[u8]) -> Result<bool, Reply> {
        match self.engine.get(key).map_err(engine_err)? {
            None => Ok(false),
            Some(v) if v.first() == Some(&ZSET) => Ok(true),
            Some(_) => Err(Reply::err(WRONGTYPE)),
        }
    }

    pub(super) fn zadd(&self, a: &[Vec<u8>]) -> Reply {
        let key = &a[0];
        let mut pairs = Vec::new();
        for sm in a[1..].chunks(2) {
            match float_arg(&sm[0]) {
                Some(s) => pairs.push((s, sm[1].clone())),
                None => return Reply::err("ERR value is not a valid float"),
            }
        }
        if let Err(r) = self.zset_marker(key) {
            return r;
        }
        tryr!(self.engine.put(key, &[ZSET]));
        let mut added = 0;
        for (score, member) in pairs {
            let mk = store::zmember_key(key, &member);
            match tryr!(self.engine.get(&mk)) {
                Some(old) => {
                    if let Some(os) = store::score_of(&old) {
                        tryr!(self.engine.delete(&store::zscore_key(key, os, &member)));
                    }
                }
                None => added += 1,
            }
            tryr!(self.engine.put(&mk, &store::score_bytes(score)));
            tryr!(self
                .engine
                .put(&store::zscore_key(key, score, &member), b""));
        }
        Reply::Integer(added)
    }

    pub(super) fn zrem(&self, a: &[Vec<u8>]) -> Reply {
        let key = &a[0];
        match self.zset_marker(key) {
            Ok(false) => return Reply::Integer(0),
            Err(r) => return r,
            Ok(true) => {}
        }
        let mut removed = 0;
        for member in &a[1..] {
            let mk = store::zmember_key(key, member);
            if let Some(old) = tryr!(self.engine.get(&mk)) {
                if let Some(os) = store::score_of(&old) {
                    tryr!(self.engine.delete(&store::zscore_key(key, os, member)));
                }
                tryr!(self.engine.delete(&mk));
                removed += 1;
            }
        }
        let prefix = store::zmember_prefix(key);
        if tryr!(self
            .engine
            .scan(prefix.clone()..store::prefix_end(&prefix), 1))
        .is_empty()
        {
            tryr!(self.engine.delete(key));
        }
        Reply::Integer(removed)
    }

    pub(super) fn zcard(&self, key: &[u8]) -> Reply {
        match self.zset_marker(key) {
            Ok(false) => Reply::Integer(0),
            Err(r) => r,
            Ok(true) => {
                // counted as the members stream by, in bounded memory
                let prefix = store::zmember_prefix(key);
                let end = store::prefix_end(&prefix);
                let mut n = 0i64;
                for entry in tryr!(self.engine.range(prefix..end)) {
                    tryr!(entry);
                    n += 1;
                }
                Reply::Integer(n)
            }
        }
    }

    pub(super) fn zrangebyscore(&self, a: &[Vec<u8>]) -> Reply {
        let key = &a[0];
        let bound = |b: &[u8]| -> Option<(f64, bool)> {
            match b.strip_prefix(b"(") {
                Some(rest) => float_arg(rest).map(|x| (x, true)),
                None => float_arg(b).map(|x| (x, false)),
            }
        };
        let (Some((min, min_ex)), Some((max, max_ex))) = (bound(&a[1]), bound(&a[2])) else {
            return Reply::err("ERR min or max is not a float");
        };
        let mut with_scores = false;
        let mut offset = 0usize;
        let mut count = usize::MAX;
        let mut i = 3;
        while i < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "WITHSCORES" => i += 1,
                "LIMIT" if i + 2 < a.len() => {
                    let (Some(o), Some(c)) = (int_arg(&a[i + 1]), int_arg(&a[i + 2])) else {
                        return Reply::err("ERR value is not an integer or out of range");
                    };
                    offset = o.max(0) as usize;
                    count = if c < 0 { usize::MAX } else { c as usize };
                    i += 3;
                    continue;
                }
                _ => return Reply::err("ERR syntax error"),
            }
            with_scores = true;
        }
        match self.zset_marker(key) {
            Ok(false) => return Reply::Array(Some(Vec::new())),
            Err(r) => return r,
            Ok(true) => {}
        }
        let prefix = store::zscore_prefix(key);
        let mut start = prefix.clone();
        start.extend_from_slice(&store::score_bytes(min));
        let entries = tryr!(self.engine.scan(
            start..store::prefix_end(&prefix),
            offset.saturating_add(count).saturating_add(64)
        ));
        let mut out = Vec::new();
        let mut skipped = 0;
        for (ik, _) in entries {
            let rest = &ik[prefix.len()..];
            let Some(score) = store::score_of(rest) else {
                continue;
            };
            if (min_ex && score <= min) || score < min {
                continue;
            }
            if score > max || (max_ex && score >= max) {
                break;
            }
            if skipped < offset {
                skipped += 1;
                continue;
            }
            if out.len() >= count {
                break;
            }
            out.push((Reply::bulk(rest[8..].to_vec()), Reply::Double(score)));
        }
        if with_scores {
            Reply::Pairs(out)
        } else {
            Reply::Array(Some(out.into_iter().map(|(m, _)| m).collect()))
        }
    }
}
