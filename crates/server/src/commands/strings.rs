//! String commands: GET, SET (with its options), MSET, EXISTS, DEL, INCR and friends.

use super::*;

impl Db {
    pub(super) fn exists(&self, keys: &[Vec<u8>]) -> Reply {
        let mut n = 0;
        for k in keys {
            n += tryr!(self.engine.get(k)).is_some() as i64;
        }
        Reply::Integer(n)
    }

    pub(super) fn mset(&self, a: &[Vec<u8>]) -> Reply {
        let values: Vec<Vec<u8>> = a.chunks(2).map(|kv| store::string(&kv[1])).collect();
        let batch: Vec<(&[u8], Option<&[u8]>)> = a
            .chunks(2)
            .zip(&values)
            .map(|(kv, v)| (kv[0].as_slice(), Some(v.as_slice())))
            .collect();
        tryr!(self.engine.write_batch(&batch));
        Reply::ok()
    }

    pub(super) fn get(&self, key: &[u8]) -> Reply {
        match tryr!(self.engine.get(key)) {
            None => Reply::Bulk(None),
            Some(v) if v.first() == Some(&STRING) => Reply::bulk(v[1..].to_vec()),
            Some(_) => Reply::err(WRONGTYPE),
        }
    }

    pub(super) fn set(&self, a: &[Vec<u8>]) -> Reply {
        let (key, value) = (&a[0], &a[1]);
        let mut nx = false;
        let mut xx = false;
        let mut get = false;
        let mut i = 2;
        while i < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "NX" => nx = true,
                "XX" => xx = true,
                "GET" => get = true,
                "KEEPTTL" => {}
                "EX" | "PX" | "EXAT" | "PXAT" => {
                    return Reply::err("ERR expiry is not supported by this engine")
                }
                _ => return Reply::err("ERR syntax error"),
            }
            i += 1;
        }
        if nx && xx {
            return Reply::err("ERR syntax error");
        }
        if !(nx || xx || get) {
            // a plain SET overwrites whatever is there: one blind write
            tryr!(self.engine.put(key, &store::string(value)));
            return Reply::ok();
        }
        let mut old: Option<Vec<u8>> = None;
        let mut wrong = false;
        let mut written = false;
        let stored = store::string(value);
        let r = self.engine.read_modify_write(key, |cur| {
            if get && cur.is_some_and(|c| c.first() != Some(&STRING)) {
                wrong = true;
                return cur.map(|c| c.to_vec());
            }
            old = cur.map(|c| c.to_vec());
            if (nx && cur.is_some()) || (xx && cur.is_none()) {
                return cur.map(|c| c.to_vec());
            }
            written = true;
            Some(stored.clone())
        });
        tryr!(r);
        if wrong {
            return Reply::err(WRONGTYPE);
        }
        if get {
            return Reply::Bulk(old.map(|o| o[1..].to_vec()));
        }
        if written {
            Reply::ok()
        } else {
            Reply::Bulk(None)
        }
    }

    pub(super) fn del(&self, keys: &[Vec<u8>]) -> Reply {
        let mut n = 0;
        for k in keys {
            let cur = tryr!(self.engine.get(k));
            if let Some(v) = cur {
                if v.first() == Some(&ZSET) {
                    // streamed: a sorted set of any size is deleted in bounded memory
                    for prefix in [store::zscore_prefix(k), store::zmember_prefix(k)] {
                        let end = store::prefix_end(&prefix);
                        for entry in tryr!(self.engine.range(prefix..end)) {
                            let (ik, _) = tryr!(entry);
                            tryr!(self.engine.delete(&ik));
                        }
                    }
                }
                tryr!(self.engine.delete(k));
                n += 1;
            }
        }
        Reply::Integer(n)
    }

    pub(super) fn incr(&self, key: &[u8], by: i64) -> Reply {
        let mut outcome: Result<i64, &'static str> = Ok(0);
        let r = self.engine.read_modify_write(key, |cur| {
            let current = match cur {
                None => 0,
                Some(v) if v.first() == Some(&STRING) => match std::str::from_utf8(&v[1..])
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(x) => x,
                    None => {
                        outcome = Err("ERR value is not an integer or out of range");
                        return Some(v.to_vec());
                    }
                },
                Some(v) => {
                    outcome = Err(WRONGTYPE);
                    return Some(v.to_vec());
                }
            };
            match current.checked_add(by) {
                Some(n) => {
                    outcome = Ok(n);
                    Some(store::string(n.to_string().as_bytes()))
                }
                None => {
                    outcome = Err("ERR increment or decrement would overflow");
                    cur.map(|c| c.to_vec())
                }
            }
        });
        tryr!(r);
        match outcome {
            Ok(n) => Reply::Integer(n),
            Err(e) => Reply::err(e),
        }
    }
}
