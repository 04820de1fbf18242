//! Connection and server commands: HELLO, COMMAND, CONFIG, INFO.

use super::*;

impl Db {
    /// HELLO's reply, in the protocol it asks for (or `current`), and the protocol it switches to.
    pub(super) fn hello(&self, a: &[Vec<u8>], current: Protocol) -> (Reply, Option<Protocol>) {
        let proto = match Db::hello_protocol(a) {
            Ok(p) => p,
            Err(e) => return (e, None),
        };
        let shown = proto.unwrap_or(current);
        let reply = Reply::Map(vec![
            (Reply::bulk("server"), Reply::bulk("cosine")),
            (
                Reply::bulk("version"),
                Reply::bulk(env!("CARGO_PKG_VERSION")),
            ),
            (
                Reply::bulk("proto"),
                Reply::Integer(match shown {
                    Protocol::Resp3 => 3,
                    Protocol::Resp2 => 2,
                }),
            ),
            (Reply::bulk("id"), Reply::Integer(1)),
            (Reply::bulk("mode"), Reply::bulk("standalone")),
            (Reply::bulk("role"), Reply::bulk("master")),
            (Reply::bulk("modules"), Reply::Array(Some(Vec::new()))),
        ]);
        (reply, proto)
    }

    /// The protocol `HELLO [protover [AUTH user pass] [SETNAME name]]` asks for (None: unchanged), or its error
    /// reply. The connection switches before the reply, which is in the new protocol.
    pub fn hello_protocol(a: &[Vec<u8>]) -> Result<Option<Protocol>, Reply> {
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
        let mut i = 1;
        while i < a.len() {
            match String::from_utf8_lossy(&a[i]).to_ascii_uppercase().as_str() {
                "SETNAME" if i + 1 < a.len() => i += 2,
                // no users or passwords here: every client is the default user, as a Redis without
                // requirepass accepts any credentials in HELLO
                "AUTH" if i + 2 < a.len() => i += 3,
                _ => return Err(Reply::err("ERR syntax error in HELLO option")),
            }
        }
        Ok(proto)
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
                let value = match key.as_str() {
                    "save" => Some(""),
                    "appendonly" => Some("yes"),
                    "databases" => Some("1"),
                    _ => None,
                };
                Reply::Map(match value {
                    Some(v) => vec![(Reply::bulk(key), Reply::bulk(v))],
                    None => Vec::new(),
                })
            }
            Some(s) if s == "SET" || s == "RESETSTAT" => Reply::ok(),
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
