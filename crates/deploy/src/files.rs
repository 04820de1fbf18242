//! The files of a deployment: one engine project per distinct design, the proxy configuration, and per shard a
//! directory to copy to its host (start and stop scripts, a systemd unit); scripts to build, to rehearse it all
//! on one machine, and to check its health; a README that says how to run each part.

use crate::layout::{place, Layout};
use crate::proxy::ProxyConfig;
use crate::Error;
use cosine_design::{Deployment, Design};
use cosine_engine::template::{generate, Generate};
use std::fmt::Write as _;
use std::path::Path;

/// What [`generate_deployment`] wrote.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The proxy configuration (`nutcracker.yml`).
    pub proxy: ProxyConfig,
    /// The worst relative error of a shard's share of the ring against its share of memory.
    pub share_error: f64,
    /// Each shard's share of the ring.
    pub shares: Vec<f64>,
    /// Each shard's share of memory.
    pub targets: Vec<f64>,
    /// With a previous deployment: the share of keys that change shard, and the least share any placement
    /// could move (what the old shards hold above their new shares).
    pub moved: Option<(f64, f64)>,
}

/// Writes a file only its owner may read (the shards' password).
fn write_secret(path: &Path, text: &str) -> std::io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    std::io::Write::write_all(&mut o.open(path)?, text.as_bytes())
}

fn write_script(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    let g = bytes as f64 / (1u64 << 30) as f64;
    if g.fract() == 0.0 {
        format!("{g:.0} GiB")
    } else {
        format!("{g:.1} GiB")
    }
}

/// A probe key for each shard: the first `cosine:health:<name>:<k>` the ring sends to it.
pub fn probe_keys(proxy: &ProxyConfig) -> Vec<String> {
    let ring = proxy.ring();
    proxy
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (0u64..)
                .map(|k| format!("cosine:health:{}:{k}", s.name))
                .find(|key| ring.owner(key.as_bytes()) == Some(i))
                .unwrap_or_default()
        })
        .collect()
}

/// Writes the deployment of `d` into `out` (absent or empty): see the module's documentation. `g` names the
/// engines (`<name>-<k>`, one per distinct design) and where their crates come from.
pub fn generate_deployment(
    d: &Deployment,
    out: &Path,
    g: &Generate,
    l: &Layout,
) -> Result<Generated, Error> {
    let (proxy, share_error) = place(d, l)?;
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        return Err(Error::Hosts(format!(
            "{} exists and is not empty",
            out.display()
        )));
    }
    std::fs::create_dir_all(out)?;
    let mut designs: Vec<&Design> = Vec::new();
    let mut engine_of = Vec::new();
    for s in &d.shards {
        let i = match designs.iter().position(|x| **x == s.design) {
            Some(i) => i,
            None => {
                designs.push(&s.design);
                designs.len() - 1
            }
        };
        engine_of.push(format!("{}-{i}", g.name));
    }
    for (k, design) in designs.iter().enumerate() {
        let name = format!("{}-{k}", g.name);
        let sub = Generate {
            name: name.clone(),
            data: "data".into(),
            ..g.clone()
        };
        generate(design, &out.join("engines").join(&name), &sub)?;
    }
    // it holds the password (redis_auth): owner-only, as the password file
    write_secret(&out.join("nutcracker.yml"), &proxy.to_yaml())?;
    let password = proxy.redis_auth.clone().unwrap_or_default();
    write_secret(&out.join("password"), &format!("{password}\n"))?;
    std::fs::write(out.join("deployment.json"), d.to_json() + "\n")?;
    let total: u64 = d.shards.iter().map(|s| s.memory_bytes).sum();
    let targets: Vec<f64> = d
        .shards
        .iter()
        .map(|s| s.memory_bytes as f64 / total as f64)
        .collect();
    let shares = proxy.ring().shares();

    // build.sh: the engines, and each binary into its shard's directory
    let mut build = String::from(
        "#!/usr/bin/env bash\n# Builds each engine and copies its binary into the directory of every shard that runs it.\n# ./build.sh [--debug]   (release by default)\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\nexport CARGO_TARGET_DIR=\"${CARGO_TARGET_DIR:-$PWD/target}\"\nprofile=release; flag=--release\nif [ \"${1:-}\" = --debug ]; then profile=debug; flag=; fi\n",
    );
    for k in 0..designs.len() {
        let _ = writeln!(
            build,
            "cargo build $flag -q --manifest-path engines/{}-{k}/Cargo.toml",
            g.name
        );
    }
    for (s, engine) in proxy.servers.iter().zip(&engine_of) {
        let _ = writeln!(
            build,
            "cp \"$CARGO_TARGET_DIR/$profile/{engine}\" hosts/{}/",
            s.name
        );
    }
    write_script(&out.join("build.sh"), &build)?;

    // one directory per shard, to copy to its host
    for (i, (s, engine)) in proxy.servers.iter().zip(&engine_of).enumerate() {
        let spec = &d.shards[i];
        let dir = out.join("hosts").join(&s.name);
        std::fs::create_dir_all(&dir)?;
        write_secret(&dir.join("password"), &format!("{password}\n"))?;
        let memory = format!(
            "{} VM of {}; the engine's design holds M = {} (buffer {}, filters {}, fences {}, cache {}){}",
            spec.vm,
            gib(spec.memory_bytes),
            gib(spec.design.memory_bytes()),
            gib(spec.design.buffer_bytes),
            gib(spec.design.filter_bytes),
            gib(spec.design.fence_bytes),
            gib(spec.design.cache_bytes),
            spec.reserved_bytes.map_or(String::new(), |r| format!(
                "; {} kept for the operating system and the engine's own overhead",
                gib(r)
            ))
        );
        let start = format!(
            r#"#!/usr/bin/env bash
# {name}: {memory}.
# Starts the engine on {addr} (COSINE_BIND overrides it: the VM's private address and port {port}, never a public
# or 0.0.0.0 one), data in $COSINE_DATA (default ./data), requiring the password in ./password (the proxy's
# redis_auth); waits until it accepts connections.
set -euo pipefail
cd "$(dirname "$0")"
DATA="${{COSINE_DATA:-$PWD/data}}"
BIND="${{COSINE_BIND:-{addr}}}"
mkdir -p "$DATA" run
if [ -f run/engine.pid ] && kill -0 "$(cat run/engine.pid)" 2>/dev/null; then
  echo "{name} already runs (pid $(cat run/engine.pid)); ./stop.sh first" >&2; exit 1
fi
if (echo > /dev/tcp/{host}/{port}) 2>/dev/null; then
  echo "something already listens on {addr}" >&2; exit 1
fi
setsid ./{engine} --bind "$BIND" --data "$DATA" --requirepass-file password < /dev/null > run/engine.log 2>&1 &
pid=$!
echo $pid > run/engine.pid
for _ in $(seq 1 300); do
  kill -0 $pid 2>/dev/null || {{ echo "{name} exited:" >&2; cat run/engine.log >&2; rm -f run/engine.pid; exit 1; }}
  (echo > /dev/tcp/{host}/{port}) 2>/dev/null && {{ echo "{name} serving on {addr} (pid $pid)"; exit 0; }}
  sleep 0.1
done
echo "{name} did not open {addr} in 30 s (run/engine.log)" >&2; exit 1
"#,
            name = s.name,
            addr = s.addr(),
            host = s.host,
            port = s.port,
        );
        write_script(&dir.join("start.sh"), &start)?;
        let stop = format!(
            r#"#!/usr/bin/env bash
# Stops {name}: SIGTERM, then waits (up to 2 minutes) while the engine flushes its buffer and closes.
cd "$(dirname "$0")"
[ -f run/engine.pid ] || exit 0
pid=$(cat run/engine.pid)
kill -TERM "$pid" 2>/dev/null
for _ in $(seq 1 1200); do
  kill -0 "$pid" 2>/dev/null || {{ rm -f run/engine.pid; exit 0; }}
  sleep 0.1
done
echo "{name} (pid $pid) is still closing after 2 minutes" >&2; exit 1
"#,
            name = s.name
        );
        write_script(&dir.join("stop.sh"), &stop)?;
        let unit = format!(
            "# systemd unit for {name}: {memory}.\n# Install: copy this directory to /opt/cosine/{name} on {host}, then\n#   cp /opt/cosine/{name}/cosine-{name}.service /etc/systemd/system/ && systemctl daemon-reload\n#   systemctl enable --now cosine-{name}\n[Unit]\nDescription=Cosine shard {name} ({vm})\nAfter=network-online.target\nWants=network-online.target\n\n[Service]\nExecStart=/opt/cosine/{name}/{engine} --bind {addr} --data /var/lib/cosine/{name} --requirepass-file /opt/cosine/{name}/password\nStateDirectory=cosine/{name}\nKillSignal=SIGTERM\nTimeoutStopSec=120\nRestart=on-failure\nLimitNOFILE=65536\n\n[Install]\nWantedBy=multi-user.target\n",
            name = s.name,
            host = s.host,
            vm = spec.vm,
            addr = s.addr(),
        );
        std::fs::write(dir.join(format!("cosine-{}.service", s.name)), unit)?;
    }

    // nutcracker's stats port defaults to 22222 on every address: a second proxy on the host would fail
    let stats = l
        .proxy_port
        .checked_add(1)
        .unwrap_or(l.proxy_port.saturating_sub(1));
    let proxy_sh = format!(
        r#"#!/usr/bin/env bash
# twemproxy (nutcracker, Debian package nutcracker) with nutcracker.yml, beside the application: clients connect to
# 127.0.0.1:{p} (stats on 127.0.0.1:{stats}). `./proxy.sh stop` stops it and waits until it has exited.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p run
if [ "${{1:-}}" = stop ]; then
  [ -f run/nutcracker.pid ] || exit 0
  pid=$(cat run/nutcracker.pid); kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || {{ rm -f run/nutcracker.pid; exit 0; }}; sleep 0.1; done
  echo "nutcracker (pid $pid) did not exit" >&2; exit 1
fi
if (echo > /dev/tcp/127.0.0.1/{p}) 2>/dev/null; then
  echo "something already listens on 127.0.0.1:{p} (an older proxy? ./proxy.sh stop in its directory)" >&2; exit 1
fi
: > run/nutcracker.log
# nutcracker says why it stops (a port in use, a bad server line) only in the file -o names
nutcracker -c nutcracker.yml -a 127.0.0.1 -s {stats} -o run/nutcracker.log < /dev/null >> run/nutcracker.log 2>&1 &
pid=$!
echo $pid > run/nutcracker.pid
for _ in $(seq 1 100); do
  kill -0 $pid 2>/dev/null || {{ echo "nutcracker exited:" >&2; cat run/nutcracker.log >&2; rm -f run/nutcracker.pid; exit 1; }}
  (echo > /dev/tcp/127.0.0.1/{p}) 2>/dev/null && {{ echo "proxy on 127.0.0.1:{p} (pid $pid)"; exit 0; }}
  sleep 0.1
done
echo "nutcracker did not open 127.0.0.1:{p}:" >&2; cat run/nutcracker.log >&2; exit 1
"#,
        p = l.proxy_port
    );
    write_script(&out.join("proxy.sh"), &proxy_sh)?;
    let mut start = String::from("#!/usr/bin/env bash\n# A rehearsal on this machine: builds the engines, starts every shard here, then the proxy. Works when every\n# shard's address is local (127.0.0.1, or 127.0.0.2 and up on Linux). ./start.sh [--debug]\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\n./build.sh \"$@\"\n");
    for s in &proxy.servers {
        let _ = writeln!(start, "hosts/{}/start.sh", s.name);
    }
    start.push_str("./proxy.sh\n");
    write_script(&out.join("start.sh"), &start)?;
    let mut stop = String::from("#!/usr/bin/env bash\n# Stops the proxy, then every shard started here.\ncd \"$(dirname \"$0\")\"\n./proxy.sh stop\n");
    for s in &proxy.servers {
        let _ = writeln!(stop, "hosts/{}/stop.sh", s.name);
    }
    write_script(&out.join("stop.sh"), &stop)?;

    // health.sh: PING around the proxy, then a probe key per shard through it, read back from the shard itself
    let probes = probe_keys(&proxy);
    let mut health = format!("#!/usr/bin/env bash\n# Checks every shard directly (PING) and through the proxy: a probe key that the ring sends to each shard is\n# written through the proxy and read back from that shard, so a shard that is down or a proxy that routes\n# differently from nutcracker.yml fails the check. Needs redis-cli (Debian package redis-tools); the password is\n# ./password's.\ncd \"$(dirname \"$0\")\"\nREDISCLI_AUTH=\"$(head -n 1 password)\"; export REDISCLI_AUTH\nPROXY_HOST=${{PROXY_HOST:-127.0.0.1}}; PROXY_PORT=${{PROXY_PORT:-{}}}\nfail=0\n", l.proxy_port);
    for (s, key) in proxy.servers.iter().zip(&probes) {
        let _ = writeln!(
            health,
            "if [ \"$(redis-cli -h {h} -p {p} PING 2>&1)\" = PONG ]; then echo \"{n} {h}:{p} PING ok\"; else echo \"{n} {h}:{p} does not answer PING\"; fail=1; fi\nv=\"probe-$$-$RANDOM\"\nif [ \"$(redis-cli -h \"$PROXY_HOST\" -p \"$PROXY_PORT\" SET {key} \"$v\" 2>&1)\" = OK ] && [ \"$(redis-cli -h {h} -p {p} GET {key} 2>&1)\" = \"$v\" ]; then echo \"{n} through the proxy ok\"; else echo \"{n}: a key written through the proxy did not arrive\"; fail=1; fi\nredis-cli -h {h} -p {p} DEL {key} > /dev/null 2>&1",
            h = s.host,
            p = s.port,
            n = s.name
        );
    }
    health.push_str("exit $fail\n");
    write_script(&out.join("health.sh"), &health)?;

    // README
    let mut readme = format!(
        "# {} on {}: {} shards behind twemproxy\n\nGenerated by `cosine generate --deployment`. Each VM runs one Cosine engine; twemproxy (nutcracker) spreads\nthe keys over them by ketama consistent hashing (md5 key hash), each shard's weight tuned so that its share of\nthe keys is its VM's share of the memory the search priced (worst shard {:.1}% off its share; keys hash\nuniformly, so a million keys stay within about a percent of these shares).\n\n| shard | VM | memory | share of memory | share of the ring | weight | address | engine |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
        g.name,
        d.provider,
        d.shards.len(),
        100.0 * share_error
    );
    for (i, s) in proxy.servers.iter().enumerate() {
        let _ = writeln!(
            readme,
            "| {} | {} | {} | {:.2}% | {:.2}% | {} | {} | `engines/{}` |",
            s.name,
            s.vm,
            gib(d.shards[i].memory_bytes),
            100.0 * targets[i],
            100.0 * shares[i],
            s.weight,
            s.addr(),
            engine_of[i]
        );
    }
    let _ = writeln!(
        readme,
        "\n## On the VMs\n\n1. On a build machine with Rust: `./build.sh` builds the engines and puts each binary in `hosts/<shard>/`.\n2. Copy `hosts/<shard>/` to its VM (the address above), e.g. `scp -r hosts/shard-0 HOST:/opt/cosine/shard-0`.\n3. On each VM either run `./start.sh` in that directory (`COSINE_DATA` picks the data directory, `./stop.sh`\n   stops it), or install the systemd unit the directory holds (its header says how; data in\n   `/var/lib/cosine/<shard>`). The engine listens on the address above (the VM's private address: open that port to the proxy's hosts only)\n   and requires the password in `password` (readable by its owner only, as `nutcracker.yml`; keep them so).\n4. On each application host: `nutcracker.yml` and `./proxy.sh` (Debian package `nutcracker`); clients connect\n   to 127.0.0.1:{p} and authenticate with the same password (`AUTH`; nutcracker's `redis_auth`). Keep each server's name in `nutcracker.yml` when a VM changes address: the names place the\n   ring's points.\n5. `./health.sh` (redis-cli) PINGs each shard and sends a probe key through the proxy to each.\n\n## On this machine\n\n`./start.sh [--debug]` builds and starts every shard and the proxy here (every address must be local), and\n`./stop.sh` stops them.\n",
        p = l.proxy_port
    );
    let mut moved = None;
    if let Some(prev) = &l.previous {
        let m = prev.ring().moves_to(&proxy.ring());
        let mut text = String::from("\n## Growing from the previous deployment\n\nShards on a VM type the previous deployment had keep their names and addresses. Share of all keys that\nchange shard (rows: old shard, columns: new; a uniform key hash):\n\n| from \\ to |");
        for s in &proxy.servers {
            let _ = write!(text, " {} |", s.name);
        }
        text.push_str("\n| --- |");
        for _ in &proxy.servers {
            text.push_str(" --- |");
        }
        text.push('\n');
        let mut total_moved = 0.0;
        for (a, old) in prev.servers.iter().enumerate() {
            let _ = write!(text, "| {} |", old.name);
            for (b, new) in proxy.servers.iter().enumerate() {
                if old.name != new.name {
                    total_moved += m[a][b];
                }
                let _ = write!(text, " {:.2}% |", 100.0 * m[a][b]);
            }
            text.push('\n');
        }
        // the least any ring could move: what each old shard holds above its new share
        let old_shares = prev.ring().shares();
        let least: f64 = prev
            .servers
            .iter()
            .zip(&old_shares)
            .map(|(o, share)| {
                let target = proxy
                    .servers
                    .iter()
                    .position(|n| n.name == o.name)
                    .map_or(0.0, |j| targets[j]);
                (share - target).max(0.0)
            })
            .sum();
        let _ = writeln!(
            text,
            "\n{:.1}% of the keys move (the least any placement could move is {:.1}%: what the old shards hold above\ntheir new shares; the rest is the kept shards' weights tuned again). The procedure (`cosine rebalance` must\nreach every old and new shard):\n\n1. Start the new VMs' engines (`hosts/<shard>/start.sh` of the shards that are new).\n2. `cosine rebalance copy --from OLD --to . --state moves.state` (OLD: the old deployment's directory or its\n   `nutcracker.yml`): copies every key whose shard changes to its new shard; the old shards keep theirs, so\n   reads through the old proxies still find everything.\n3. Pause the writers if no write may be lost (see below), run `copy` again (it re-copies only what changed),\n   and switch every application host to this `nutcracker.yml` (`./proxy.sh stop` in the old directory,\n   `./proxy.sh` here).\n4. `cosine rebalance finish --from OLD --to . --state moves.state`: the copy pass once more (a key written on its\n   old shard since is copied again unless the new shard holds a newer write; a key deleted since is deleted),\n   then each moved key is deleted from its old shard. It prints the keys moved; if it stops part-way, run it\n   again.\n5. Stop the VMs the new deployment no longer has.\n\nWithout the pause, a write made on an old shard after the last `copy` is kept unless a write through the new\nproxy reaches the same key before `finish` (that one is newer, and a read-modify-write such as INCR would have\nread the copied value).\n",
            100.0 * total_moved,
            100.0 * least
        );
        readme.push_str(&text);
        moved = Some((total_moved, least));
    }
    std::fs::write(out.join("README.md"), readme)?;
    Ok(Generated {
        proxy,
        share_error,
        shares,
        targets,
        moved,
    })
}
