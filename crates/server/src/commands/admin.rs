//! Connection and server commands: HELLO, AUTH, COMMAND, CONFIG, INFO.

use super::*;

/// A user name and password given to HELLO's AUTH.
pub type Credentials<'a> = (&'a [u8], &'a [u8]);

/// The settings CONFIG GET answers (what this server does, not knobs it takes).
fn config_value(key: &[u8]) -> Option<&'static [u8]> {
    match key {
        b"save" => Some(b""),
        b"appendonly" => Some(b"yes"),
        b"databases" => Some(b"1"),
        _ => None,
    }
}

impl Db {
    /// HELLO's reply, in the protocol it asks for (or the session's). With `AUTH user pass` it authenticates the
    /// session first (`WRONGPASS`, and nothing switched, on wrong credentials); without, a session that has not
    /// authenticated gets `NOAUTH`. The session switches protocol before the reply, which is in the new one.
    pub(super) fn hello(&self, a: &[Vec<u8>], session: &mut Session) -> Reply {
        let (proto, credentials) = match Db::hello_protocol(a) {
            Ok(h) => h,
            Err(e) => return e,
        };
        match credentials {
            Some((user, pass)) if !self.access.admits(Some(user), pass) => {
                return Reply::err(auth::WRONGPASS)
            }
            Some(_) => session.authed = true,
            None if !session.authed => {
                return Reply::err(
                    "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO \
                     <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP \
                     protocol version at the same time",
                )
            }
            None => {}
        }
        if let Some(p) = proto {
            session.proto = p;
        }
        Reply::Map(vec![
            (Reply::bulk("server"), Reply::bulk("cosine")),
            (
                Reply::bulk("version"),
                Reply::bulk(env!("CARGO_PKG_VERSION")),
            ),
            (
                Reply::bulk("proto"),
                Reply::Integer(match session.proto {
                    Protocol::Resp3 => 3,
                    Protocol::Resp2 => 2,
                }),
            ),
            (Reply::bulk("id"), Reply::Integer(1)),
            (Reply::bulk("mode"), Reply::bulk("standalone")),
            (Reply::bulk("role"), Reply::bulk("master")),
            (Reply::bulk("modules"), Reply::Array(Some(Vec::new()))),
        ])
    }

    /// The protocol `HELLO [protover [AUTH user pass] [SETNAME name]]` asks for (None: unchanged) and the
    /// credentials it gives, or its error reply.
    pub fn hello_protocol(
        a: &[Vec<u8>],
    ) -> Result<(Option<Protocol>, Option<Credentials<'_>>), Reply> {
        let proto = match a.first().map(|v| int_arg(v)) {
            None => None,
            Some(Some(2)) => Some(Protocol::Resp2),
            Some(Some(3)) => Some(Protocol::Resp3),
            Some(Some(_)) => return Err(Reply::err("NOPROTO unsupported protocol version")),
            Some(None) => {
                return Err(Reply::err(
                    "ERR Protocol version is not an integer or out of range",
                ))
            }
        };
        let mut credentials = None;
        let mut i = 1;
        while i < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "SETNAME" if i + 1 < a.len() => i += 2,
                "AUTH" if i + 2 < a.len() => {
                    credentials = Some((&a[i + 1][..], &a[i + 2][..]));
                    i += 3
                }
                _ => return Err(Reply::err("ERR syntax error in HELLO option")),
            }
        }
        Ok((proto, credentials))
    }

    /// `AUTH password` or `AUTH user password`: authenticates the session, or `WRONGPASS` (a session that had
    /// authenticated stays so, as in Redis).
    pub(super) fn auth(&self, a: &[Vec<u8>], authed: &mut bool) -> Reply {
        let (user, pass) = match a {
            [pass] => {
                if !self.access.requires_password() {
                    return Reply::err(
                        "ERR AUTH <password> called without any password configured for the default user. \
                         Are you sure your configuration is correct?",
                    );
                }
                (None, pass)
            }
            [user, pass] => (Some(&user[..]), pass),
            _ => return arity("auth"),
        };
        if self.access.admits(user, pass) {
            *authed = true;
            Reply::ok()
        } else {
            Reply::err(auth::WRONGPASS)
        }
    }

    pub(super) fn command(&self, a: &[Vec<u8>]) -> Reply {
        match a
            .first()
            .map(|s| String::from_utf8_lossy(s).to_ascii_uppercase())
        {
            Some(s) if s == "COUNT" => Reply::Integer(COMMANDS.len() as i64),
            Some(s) if s == "DOCS" => Reply::Array(Some(Vec::new())),
            _ => Reply::Array(Some(
                COMMANDS
                    .iter()
                    .map(|(name, arity)| {
                        Reply::Array(Some(vec![
                            Reply::bulk(name.to_lowercase()),
                            Reply::Integer(*arity),
                            Reply::Array(Some(Vec::new())),
                            Reply::Integer(if *arity == 1 { 0 } else { 1 }),
                            Reply::Integer(if *arity == 1 { 0 } else { 1 }),
                            Reply::Integer(if *arity == 1 { 0 } else { 1 }),
                        ]))
                    })
                    .collect(),
            )),
        }
    }

    pub(super) fn config(&self, a: &[Vec<u8>]) -> Reply {
        match a
            .first()
            .map(|s| String::from_utf8_lossy(s).to_ascii_uppercase())
        {
            Some(s) if s == "GET" => {
                let key = a
                    .get(1)
                    .map(|k| String::from_utf8_lossy(k).to_string())
                    .unwrap_or_default();
                Reply::Map(match config_value(key.as_bytes()) {
                    Some(v) => vec![(Reply::bulk(key), Reply::bulk(v.to_vec()))],
                    None => Vec::new(),
                })
            }
            // settings are fixed at start: a SET that changes nothing is answered OK, any other is an error
            // (never a silent OK that changes nothing, such as a password that would not be checked)
            Some(s) if s == "SET" => match a {
                [_, key, value] if config_value(key) == Some(&value[..]) => Reply::ok(),
                [_, key, _] => Reply::err(format!(
                    "ERR CONFIG SET '{}' is not supported: this server's settings are fixed at start (cosine serve --help)",
                    String::from_utf8_lossy(key)
                )),
                _ => arity("config|set"),
            },
            Some(s) if s == "RESETSTAT" => {
                self.commands.store(0, Ordering::Relaxed);
                self.connections.store(0, Ordering::Relaxed);
                Reply::ok()
            }
            _ => Reply::err("ERR CONFIG subcommand must be GET, SET or RESETSTAT"),
        }
    }

    /// The INFO text: server, design, engine stats, memory.
    pub fn info(&self) -> String {
        let s = self.engine.stats();
        let d = &self.design;
        let mut out = String::new();
        out.push_str("# Server\r\n");
        out.push_str(&format!(
            "cosine_version:{}\r\nredis_version:7.0.0\r\nuptime_in_seconds:{}\r\n",
            env!("CARGO_PKG_VERSION"),
            self.started.elapsed().as_secs()
        ));
        out.push_str(&format!(
            "total_connections_received:{}\r\ntotal_commands_processed:{}\r\n",
            self.connections.load(Ordering::Relaxed),
            self.commands.load(Ordering::Relaxed)
        ));
        out.push_str("\r\n# Design\r\n");
        out.push_str(&format!(
            "class:{}\r\nsize_ratio:{}\r\nhot_runs:{}\r\ncold_runs:{}\r\nblock_bytes:{}\r\nbuffer_bytes:{}\r\nfilter_bytes:{}\r\nfence_bytes:{}\r\ncache_bytes:{}\r\ncompaction:{:?}\r\n",
            d.class.map(|c| c.to_string()).unwrap_or_else(|| "unrecorded".into()),
            d.size_ratio,
            d.hot_runs,
            d.cold_runs,
            d.block_bytes,
            d.buffer_bytes,
            d.filter_bytes,
            d.fence_bytes,
            d.cache_bytes,
            d.compaction
        ));
        out.push_str("\r\n# Engine\r\n");
        out.push_str(&format!(
            "levels:{}\r\ndisk_bytes:{}\r\nbytes_flushed:{}\r\nbytes_compacted_written:{}\r\nwrite_amplification:{:.3}\r\nspace_amplification:{:.3}\r\nblock_reads:{}\r\nindex_reads:{}\r\nfilter_probes:{}\r\nfalse_positives:{}\r\n",
            s.levels.len(),
            s.disk_bytes,
            s.bytes_flushed,
            s.bytes_compacted_written,
            s.write_amplification,
            s.space_amplification,
            s.block_reads(),
            s.index_reads(),
            s.filter_probes(),
            s.false_positives()
        ));
        for l in &s.levels {
            out.push_str(&format!(
                "level{}:runs={},files={},bytes={},entries={},hot={},resident_runs={},block_reads={},block_writes={}\r\n",
                l.level, l.runs, l.files, l.bytes, l.entries, l.hot as u8, l.resident_runs, l.io.block_reads, l.io.block_writes
            ));
        }
        out.push_str("\r\n# Memory\r\n");
        out.push_str(&format!(
            "buffer_bytes:{}\r\nfilter_bytes:{}\r\nfence_bytes:{}\r\ncache_bytes:{}\r\nbudget_bytes:{}\r\ncache_hits:{}\r\ncache_misses:{}\r\n",
            s.memory.buffer_bytes,
            s.memory.filter_bytes,
            s.memory.fence_bytes,
            s.memory.cache_bytes,
            s.memory.budget_bytes,
            s.cache.hits,
            s.cache.misses
        ));
        out
    }
}
