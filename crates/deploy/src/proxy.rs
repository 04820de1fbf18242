//! The twemproxy (nutcracker) configuration of a deployment: written from a [`Placement`](crate::Placement), and
//! read back (the files this crate writes) so that the key mover and the health check route exactly as the
//! proxy does.

use crate::ring::{KeyHash, Member, Ring};
use crate::Error;
use std::fmt::Write as _;

/// The largest weight read back (twemproxy sums weights in 32 bits).
pub const MAX_WEIGHT: u32 = 1_000_000;

/// The longest server name: nutcracker formats `"<name>-<i>"` into 86 bytes.
pub const MAX_NAME: usize = 80;

/// One shard as the proxy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyServer {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// ketama weight (tuned: see [`tune_weights`](crate::tune_weights)).
    pub weight: u32,
    /// The name the ring places its points by; it stays with the shard when its address changes.
    pub name: String,
    /// The VM type (a comment in the file).
    pub vm: String,
}

impl ProxyServer {
    /// `host:port` (`[host]:port` for an IPv6 address).
    pub fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A nutcracker pool of Cosine shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyConfig {
    /// Where the proxy listens (`host:port`).
    pub listen: String,
    /// The key hash.
    pub hash: KeyHash,
    /// The shards.
    pub servers: Vec<ProxyServer>,
    /// The shards' password: nutcracker authenticates to each with it, and asks clients for it (`AUTH`).
    pub redis_auth: Option<String>,
}

impl ProxyConfig {
    /// The ring the proxy builds.
    pub fn ring(&self) -> Ring {
        let members: Vec<Member> = self
            .servers
            .iter()
            .map(|s| Member {
                name: s.name.clone(),
                weight: s.weight,
            })
            .collect();
        Ring::new(&members, self.hash)
    }

    /// The configuration as nutcracker reads it.
    pub fn to_yaml(&self) -> String {
        let mut y = String::from(
            "# twemproxy (nutcracker): ketama consistent hashing over the Cosine shards. The key hash is md5\n\
             # (uniform over any key shape; fnv1a_64, twemproxy's usual pick, clusters keys that differ in their\n\
             # last characters). The weights are tuned so that each shard's share of the ring is its VM's share of\n\
             # the memory (`cosine-deploy`'s tune_weights); the names place the points, so keep them when a shard\n\
             # moves to another address.\n",
        );
        let _ = writeln!(
            y,
            "cosine:\n  listen: {}\n  hash: {}\n  distribution: ketama\n  redis: true\n  auto_eject_hosts: false\n  preconnect: true\n  timeout: 5000",
            self.listen,
            self.hash.name()
        );
        if let Some(p) = &self.redis_auth {
            let _ = writeln!(y, "  redis_auth: {p}");
        }
        let _ = writeln!(y, "  servers:");
        for s in &self.servers {
            let _ = writeln!(
                y,
                "   - {}:{}:{} {}  # {}",
                s.host, s.port, s.weight, s.name, s.vm
            );
        }
        y
    }

    /// Reads `nutcracker.yml` from a generated deployment's directory, or the configuration file given.
    pub fn load(path: &std::path::Path) -> Result<ProxyConfig, Error> {
        let file = if path.is_dir() {
            path.join("nutcracker.yml")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| Error::Proxy(format!("cannot read {}: {e}", file.display())))?;
        ProxyConfig::parse(&text).map_err(|e| match e {
            Error::Proxy(m) => Error::Proxy(format!("{}: {m}", file.display())),
            e => e,
        })
    }

    /// Reads a configuration this crate wrote (one pool; `listen`, `hash`, ketama and `host:port:weight name`
    /// servers).
    pub fn parse(text: &str) -> Result<ProxyConfig, Error> {
        let bad = |m: String| Error::Proxy(m);
        let (mut listen, mut hash, mut servers) = (None, None, Vec::new());
        let mut redis_auth = None;
        let mut pools = 0;
        for (n, line) in text.lines().enumerate() {
            let (body, comment) = match line.split_once('#') {
                Some((b, c)) => (b, c.trim()),
                None => (line, ""),
            };
            if !body.trim().is_empty() && !body.starts_with(' ') {
                pools += 1;
                if pools > 1 {
                    return Err(bad(format!(
                        "line {}: a second pool (cosine routes one pool)",
                        n + 1
                    )));
                }
            }
            let body = body.trim();
            if body.starts_with("hash_tag:")
                || (body.starts_with("auto_eject_hosts:") && body.ends_with("true"))
            {
                return Err(bad(format!(
                    "line {}: {body} changes routing in ways cosine does not reproduce",
                    n + 1
                )));
            }
            if let Some(v) = body.strip_prefix("listen:") {
                listen = Some(v.trim().to_string());
            } else if let Some(v) = body.strip_prefix("redis_auth:") {
                let p = v.trim().trim_matches('"');
                if p.is_empty()
                    || !p
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                {
                    return Err(bad(format!(
                        "line {}: redis_auth must be letters, digits, '-', '_' or '.'",
                        n + 1
                    )));
                }
                redis_auth = Some(p.to_string());
            } else if let Some(v) = body.strip_prefix("hash:") {
                let v = v.trim();
                hash = Some(KeyHash::parse(v).ok_or_else(|| {
                    bad(format!(
                        "line {}: hash {v} is not one cosine routes by (md5, fnv1a_64)",
                        n + 1
                    ))
                })?);
            } else if let Some(v) = body.strip_prefix("distribution:") {
                if v.trim() != "ketama" {
                    return Err(bad(format!(
                        "line {}: distribution {} (only ketama is reproduced)",
                        n + 1,
                        v.trim()
                    )));
                }
            } else if let Some(v) = body.strip_prefix("- ") {
                let mut parts = v.split_whitespace();
                let spec = parts.next().unwrap_or("");
                let name = parts.next().ok_or_else(|| {
                    bad(format!(
                        "line {}: server {spec} has no name (host:port:weight name)",
                        n + 1
                    ))
                })?;
                let mut f = spec.rsplitn(3, ':');
                let (w, p, h) = (f.next(), f.next(), f.next());
                let (Some(w), Some(p), Some(h)) = (w, p, h) else {
                    return Err(bad(format!(
                        "line {}: server {spec} is not host:port:weight",
                        n + 1
                    )));
                };
                let h = h.trim_start_matches('[').trim_end_matches(']');
                let weight: u32 = w
                    .parse()
                    .ok()
                    .filter(|w| (1..=MAX_WEIGHT).contains(w))
                    .ok_or_else(|| {
                        bad(format!("line {}: weight {w} (1 to {MAX_WEIGHT})", n + 1))
                    })?;
                if name.len() > MAX_NAME {
                    return Err(bad(format!(
                        "line {}: name {name} is longer than {MAX_NAME} bytes (nutcracker truncates it)",
                        n + 1
                    )));
                }
                servers.push(ProxyServer {
                    host: h.to_string(),
                    port: p
                        .parse()
                        .ok()
                        .filter(|&p: &u16| p > 0)
                        .ok_or_else(|| bad(format!("line {}: port {p}", n + 1)))?,
                    weight,
                    name: name.to_string(),
                    vm: comment.to_string(),
                });
            }
        }
        for (i, s) in servers.iter().enumerate() {
            if let Some(o) = servers[..i]
                .iter()
                .find(|o| o.name == s.name || o.addr() == s.addr())
            {
                return Err(bad(format!(
                    "{} at {} and {} at {}: names and addresses must differ",
                    o.name,
                    o.addr(),
                    s.name,
                    s.addr()
                )));
            }
        }
        if servers.is_empty() {
            return Err(bad("no servers".into()));
        }
        Ok(ProxyConfig {
            listen: listen.ok_or_else(|| bad("no listen address".into()))?,
            hash: hash.ok_or_else(|| bad("no hash".into()))?,
            servers,
            redis_auth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let c = ProxyConfig {
            listen: "127.0.0.1:22121".into(),
            hash: KeyHash::Md5,
            servers: vec![
                ProxyServer {
                    host: "10.0.0.1".into(),
                    port: 6380,
                    weight: 81,
                    name: "shard-0".into(),
                    vm: "r5.large".into(),
                },
                ProxyServer {
                    host: "::1".into(),
                    port: 7001,
                    weight: 161,
                    name: "shard-1".into(),
                    vm: "r5.xlarge".into(),
                },
            ],
            redis_auth: None,
        };
        assert_eq!(ProxyConfig::parse(&c.to_yaml()).ok(), Some(c.clone()));
        let with_auth = ProxyConfig {
            redis_auth: Some("0123abcd".into()),
            ..c.clone()
        };
        assert!(with_auth.to_yaml().contains("\n  redis_auth: 0123abcd\n"));
        assert_eq!(
            ProxyConfig::parse(&with_auth.to_yaml()).ok(),
            Some(with_auth)
        );
        assert!(ProxyConfig::parse("cosine:\n  listen: x\n  hash: murmur\n").is_err());
        assert!(ProxyConfig::parse("cosine:\n  listen: x\n  hash: md5\n").is_err());
        let yaml = c.to_yaml();
        for bad in [
            yaml.replace(":81 shard-0", ":0 shard-0"),
            yaml.replace("shard-1", "shard-0"),
            yaml.replace("::1:7001", "10.0.0.1:6380"),
            yaml.replace("hash: md5", "hash: md5\n  hash_tag: \"{}\""),
            yaml.replace("auto_eject_hosts: false", "auto_eject_hosts: true"),
            yaml.clone() + "other:\n  listen: 127.0.0.1:1\n",
        ] {
            assert!(ProxyConfig::parse(&bad).is_err(), "{bad}");
        }
    }
}
