//! Hash commands (HSET, HMSET, HDEL; a hash is one value, loaded and stored whole).

use super::*;

impl Db {
    pub(super) fn load_hash(&self, key: &[u8]) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, Reply> {
        match self.engine.get(key).map_err(engine_err)? {
            None => Ok(BTreeMap::new()),
            Some(v) if v.first() == Some(&HASH) => store::decode_hash(&v[1..])
                .ok_or_else(|| Reply::err("ERR stored hash does not decode")),
            Some(_) => Err(Reply::err(WRONGTYPE)),
        }
    }

    pub(super) fn hset(&self, a: &[Vec<u8>], hmset: bool) -> Reply {
        let mut outcome: Result<i64, Reply> = Ok(0);
        let r = self.engine.read_modify_write(&a[0], |cur| {
            let mut h = match cur {
                None => BTreeMap::new(),
                Some(v) if v.first() == Some(&HASH) => match store::decode_hash(&v[1..]) {
                    Some(h) => h,
                    None => {
                        outcome = Err(Reply::err("ERR stored hash does not decode"));
                        return Some(v.to_vec());
                    }
                },
                Some(v) => {
                    outcome = Err(Reply::err(WRONGTYPE));
                    return Some(v.to_vec());
                }
            };
            let mut added = 0;
            for fv in a[1..].chunks(2) {
                added += h.insert(fv[0].clone(), fv[1].clone()).is_none() as i64;
            }
            outcome = Ok(added);
            Some(store::hash(&h))
        });
        tryr!(r);
        match outcome {
            Ok(n) if hmset => {
                let _ = n;
                Reply::ok()
            }
            Ok(n) => Reply::Integer(n),
            Err(e) => e,
        }
    }

    pub(super) fn hdel(&self, a: &[Vec<u8>]) -> Reply {
        let mut outcome: Result<i64, Reply> = Ok(0);
        let r = self.engine.read_modify_write(&a[0], |cur| {
            let v = cur?;
            if v.first() != Some(&HASH) {
                outcome = Err(Reply::err(WRONGTYPE));
                return Some(v.to_vec());
            }
            let Some(mut h) = store::decode_hash(&v[1..]) else {
                outcome = Err(Reply::err("ERR stored hash does not decode"));
                return Some(v.to_vec());
            };
            let removed = a[1..].iter().filter(|f| h.remove(*f).is_some()).count() as i64;
            outcome = Ok(removed);
            if h.is_empty() {
                None
            } else {
                Some(store::hash(&h))
            }
        });
        tryr!(r);
        match outcome {
            Ok(n) => Reply::Integer(n),
            Err(e) => e,
        }
    }
}
