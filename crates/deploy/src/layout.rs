//! Where each shard of a deployment goes: its name on the ring, its address (loopback ports for a rehearsal on
//! one machine, or the hosts a user gives), and the weight that makes its share of the keys its share of memory.
//! When a deployment grows from an earlier one, shards on the same VM type keep their names and addresses, so
//! only the keys the new ring gives to other shards move.

use crate::proxy::{ProxyConfig, ProxyServer};
use crate::ring::{tune_weights, KeyHash};
use crate::Error;
use cosine_design::Deployment;

/// One line of a hosts file: the address of one VM, and optionally the VM type expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// Host name or IP address.
    pub host: String,
    /// The engine's port on it (default: [`Layout::shard_port`]).
    pub port: Option<u16>,
    /// The VM type the line says the host is.
    pub vm: Option<String>,
}

/// Parses a hosts file: one VM per line, in the deployment's order, `host[:port] [vm-type]`; blank lines and
/// `#` comments are skipped. IPv6 addresses with a port are written `[addr]:port`.
pub fn parse_hosts(text: &str) -> Result<Vec<Host>, Error> {
    let mut hosts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut f = line.split_whitespace();
        let addr = f.next().unwrap_or("");
        let vm = f.next().map(str::to_string);
        if f.next().is_some() {
            return Err(Error::Hosts(format!(
                "line {}: expected `host[:port] [vm-type]`, got `{line}`",
                n + 1
            )));
        }
        let (host, port) = if let Some(rest) = addr.strip_prefix('[') {
            let (h, p) = rest
                .split_once(']')
                .ok_or_else(|| Error::Hosts(format!("line {}: unclosed [ in {addr}", n + 1)))?;
            let port = match p {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| {
                    Error::Hosts(format!("line {}: `{p}` after ] is not :port", n + 1))
                })?),
            };
            (h.to_string(), port)
        } else if addr.matches(':').count() == 1 {
            let (h, p) = addr.split_once(':').unwrap_or((addr, ""));
            (h.to_string(), Some(p))
        } else {
            (addr.to_string(), None)
        };
        let port = match port {
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| Error::Hosts(format!("line {}: bad port `{p}`", n + 1)))?,
            ),
            None => None,
        };
        // the host goes into scripts and units: letters, digits, '.', '-' and ':' (IPv6) only
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
        {
            return Err(Error::Hosts(format!(
                "line {}: `{host}` is not a host name or an IP address",
                n + 1
            )));
        }
        hosts.push(Host { host, port, vm });
    }
    Ok(hosts)
}

/// How to lay a deployment out.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The VMs' addresses, one per shard in order; `None` for a rehearsal on 127.0.0.1.
    pub hosts: Option<Vec<Host>>,
    /// The engine's port on a host when its line gives none.
    pub shard_port: u16,
    /// The first shard's port in a rehearsal on 127.0.0.1 (shard i on `base_port + i`).
    pub base_port: u16,
    /// The proxy's port (it listens on 127.0.0.1: run it beside the application).
    pub proxy_port: u16,
    /// The deployment this one grows from: shards on the same VM type keep their names and addresses, and
    /// every shard its password.
    pub previous: Option<ProxyConfig>,
    /// The shards' password (None: a new random one, or the previous deployment's).
    pub password: Option<String>,
}

/// Names, addresses and tuned weights for every shard of `d`; returns the proxy configuration and the worst
/// relative error of a shard's share of the ring against its share of memory.
pub fn place(d: &Deployment, l: &Layout) -> Result<(ProxyConfig, f64), Error> {
    if d.shards.is_empty() {
        return Err(Error::Hosts("a deployment needs at least one shard".into()));
    }
    if let Some(h) = &l.hosts {
        if h.len() != d.shards.len() {
            return Err(Error::Hosts(format!(
                "the hosts file lists {} hosts; the deployment has {} VMs (one line per VM, in order)",
                h.len(),
                d.shards.len()
            )));
        }
        for (i, (h, s)) in h.iter().zip(&d.shards).enumerate() {
            if let Some(vm) = &h.vm {
                if vm != &s.vm {
                    return Err(Error::Hosts(format!(
                        "host {} ({}) is a {vm}; the deployment's VM {i} is a {}",
                        i + 1,
                        h.host,
                        s.vm
                    )));
                }
            }
        }
    }
    // shards on a VM type the previous deployment had keep that shard's name and address
    let mut kept: Vec<Option<&ProxyServer>> = vec![None; d.shards.len()];
    if let Some(prev) = &l.previous {
        let mut used = vec![false; prev.servers.len()];
        for (i, s) in d.shards.iter().enumerate() {
            if let Some(j) =
                (0..prev.servers.len()).find(|&j| !used[j] && prev.servers[j].vm == s.vm)
            {
                used[j] = true;
                kept[i] = Some(&prev.servers[j]);
            }
        }
    }
    // a tuned name is `<name>.<k>`: a fresh name differs from every kept one before the dot
    let taken: Vec<&str> = kept
        .iter()
        .flatten()
        .map(|s| s.name.split('.').next().unwrap_or(&s.name))
        .collect();
    let mut next = 0usize;
    let mut fresh_name = || loop {
        let name = format!("shard-{next}");
        next += 1;
        if !taken.contains(&name.as_str()) {
            return name;
        }
    };
    // a rehearsal's new shards take no port an old shard had: a dropped shard may still run there
    let mut used_ports: Vec<u16> = l
        .previous
        .iter()
        .flat_map(|p| &p.servers)
        .filter(|s| s.host == "127.0.0.1")
        .map(|s| s.port)
        .collect();
    let mut servers = Vec::new();
    for (i, s) in d.shards.iter().enumerate() {
        let name = match kept[i] {
            Some(p) => p.name.clone(),
            None => fresh_name(),
        };
        let (host, port) = match (&l.hosts, kept[i]) {
            (Some(h), prev) => {
                let h = &h[i];
                let port = h.port.unwrap_or(l.shard_port);
                if let Some(p) = prev {
                    if p.host != h.host || p.port != port {
                        return Err(Error::Hosts(format!(
                            "{name} ({}) is at {} in the deployment it grows from; the hosts file puts VM {i} at {}:{port} (list the kept VMs at their addresses)",
                            s.vm,
                            p.addr(),
                            h.host
                        )));
                    }
                }
                (h.host.clone(), port)
            }
            (None, Some(p)) => (p.host.clone(), p.port),
            (None, None) => {
                let mut port = l.base_port.saturating_add(i as u16);
                while used_ports.contains(&port) {
                    port = port
                        .checked_add(1)
                        .ok_or_else(|| Error::Hosts("no free port above --base-port".into()))?;
                }
                used_ports.push(port);
                ("127.0.0.1".to_string(), port)
            }
        };
        servers.push(ProxyServer {
            host,
            port,
            weight: 0,
            name,
            vm: s.vm.clone(),
        });
    }
    // a new shard at an address an old shard had (with other keys, under another name) would make the key
    // mover copy a server onto itself
    if let Some(prev) = &l.previous {
        for (i, s) in servers.iter().enumerate() {
            if kept[i].is_some() {
                continue;
            }
            if let Some(o) = prev.servers.iter().find(|o| o.addr() == s.addr()) {
                return Err(Error::Hosts(format!(
                    "VM {i} ({}) is at {}, where {} ({}) was: a VM the new deployment does not keep by its type needs a new address",
                    s.vm,
                    s.addr(),
                    o.name,
                    o.vm
                )));
            }
        }
    }
    let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    let renamable: Vec<bool> = kept.iter().map(Option::is_none).collect();
    if let Some(dup) = (1..servers.len()).find(|&i| {
        servers[..i]
            .iter()
            .any(|s| s.host == servers[i].host && s.port == servers[i].port)
    }) {
        return Err(Error::Hosts(format!(
            "two shards at {} (give each VM its own address or port)",
            servers[dup].addr()
        )));
    }
    if d.shards.iter().any(|s| s.memory_bytes == 0) {
        return Err(Error::Hosts("a VM with no memory holds no share".into()));
    }
    let targets: Vec<f64> = d.shards.iter().map(|s| s.memory_bytes as f64).collect();
    let tuned = tune_weights(&names, &renamable, &targets, KeyHash::Md5);
    let error = tuned.error;
    for ((s, w), name) in servers.iter_mut().zip(tuned.weights).zip(tuned.names) {
        s.weight = w;
        s.name = name;
    }
    Ok((
        ProxyConfig {
            listen: format!("127.0.0.1:{}", l.proxy_port),
            hash: KeyHash::Md5,
            servers,
            redis_auth: Some(password(l)?),
        },
        error,
    ))
}

/// The shards' password: the one given, else the previous deployment's (its running shards keep theirs), else
/// 32 random hex digits.
fn password(l: &Layout) -> Result<String, Error> {
    if let Some(p) = l
        .password
        .clone()
        .or_else(|| l.previous.as_ref()?.redis_auth.clone())
    {
        // nutcracker.yml holds it unquoted, and redis URLs carry it
        if p.is_empty()
            || !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(Error::Hosts(
                "a shard password must be letters, digits, '-', '_' or '.'".into(),
            ));
        }
        return Ok(p);
    }
    use rand::Rng;
    let mut rng = rand::rng();
    Ok((0..32)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosine_design::{Design, ShardSpec};

    fn deployment(vms: &[(&str, u64)]) -> Deployment {
        Deployment {
            provider: "aws".into(),
            shards: vms
                .iter()
                .map(|&(vm, gib)| ShardSpec {
                    vm: vm.into(),
                    memory_bytes: gib << 30,
                    design: Design::rocksdb_like(1 << 20, 1 << 20, 1 << 20),
                    reserved_bytes: None,
                })
                .collect(),
        }
    }

    fn layout() -> Layout {
        Layout {
            hosts: None,
            shard_port: 6380,
            base_port: 7001,
            proxy_port: 22121,
            previous: None,
            password: None,
        }
    }

    #[test]
    fn hosts_files_parse_and_refuse_nonsense() {
        let h = parse_hosts(
            "# vms\n10.0.0.1 r5.large\n10.0.0.2:7000\n[::1]:7001 m5.large\nexample.org\n",
        )
        .unwrap();
        assert_eq!(h.len(), 4);
        assert_eq!(h[0].vm.as_deref(), Some("r5.large"));
        assert_eq!((h[1].host.as_str(), h[1].port), ("10.0.0.2", Some(7000)));
        assert_eq!((h[2].host.as_str(), h[2].port), ("::1", Some(7001)));
        assert_eq!(h[3].port, None);
        assert!(parse_hosts("10.0.0.1:0\n").is_err());
        assert!(parse_hosts("10.0.0.1:x\n").is_err());
        assert!(parse_hosts("10.0.0.1 a b\n").is_err());
        assert!(parse_hosts("$(reboot)\n").is_err());
        assert!(parse_hosts("[::1]x\n").is_err());
    }

    #[test]
    fn hosts_are_checked_against_the_deployment() {
        let d = deployment(&[("r5.large", 16), ("r5.xlarge", 32)]);
        let mut l = layout();
        l.hosts = Some(parse_hosts("10.0.0.1 r5.large\n10.0.0.2 m5.large\n").unwrap());
        let e = place(&d, &l).unwrap_err().to_string();
        assert!(e.contains("m5.large") && e.contains("r5.xlarge"), "{e}");
        l.hosts = Some(parse_hosts("10.0.0.1\n").unwrap());
        assert!(place(&d, &l).is_err());
        l.hosts = Some(parse_hosts("10.0.0.1\n10.0.0.1\n").unwrap());
        assert!(place(&d, &l)
            .unwrap_err()
            .to_string()
            .contains("two shards"));
        l.hosts = Some(parse_hosts("10.0.0.1\n10.0.0.2:7000\n").unwrap());
        let (c, err) = place(&d, &l).unwrap();
        assert_eq!(c.servers[0].addr(), "10.0.0.1:6380");
        assert_eq!(c.servers[1].addr(), "10.0.0.2:7000");
        assert!(err < 0.1);
    }

    #[test]
    fn growing_keeps_names_and_addresses_of_kept_vms() {
        let old = place(&deployment(&[("r5.large", 16); 3]), &layout())
            .unwrap()
            .0;
        let mut l = layout();
        l.previous = Some(old.clone());
        let new = place(
            &deployment(&[
                ("r5.large", 16),
                ("r5.xlarge", 32),
                ("r5.large", 16),
                ("r5.large", 16),
            ]),
            &l,
        )
        .unwrap()
        .0;
        assert_eq!(new.servers[0].name, "shard-0");
        assert_eq!(new.servers[2].name, "shard-1");
        assert_eq!(new.servers[3].name, "shard-2");
        assert_eq!(new.servers[1].name, "shard-3");
        assert_eq!(new.servers[3].addr(), old.servers[2].addr());
        // the new VM gets a port no kept shard uses
        assert!(old.servers.iter().all(|s| s.port != new.servers[1].port));
    }
}
