//! The measurement behind the README's table of twemproxy's key hashes (ignored by default).

use super::*;

/// The measurement behind the README's table of twemproxy's key hashes: on the search's mixed configuration,
/// each hash with weights in proportion to memory (GiB) and with the tuned weights, 100,000 keys of each shape
/// written through a real nutcracker; prints the worst shard's relative error against its share per shape.
/// `cargo test --release -p cosine --test deploy -- --ignored --nocapture measure_hashes`.
#[test]
#[ignore = "a measurement, not a check: 24 nutcracker runs of 400,000 keys (about 18 minutes); run with cargo test --release -p cosine --test deploy -- --ignored --nocapture measure_hashes"]
fn measure_hashes() {
    let _serial = serial();
    assert!(have_nutcracker());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("deploy");
    let (base, proxy) = ports(5);
    generate_mixed(&out, "hashes", base, proxy);
    let _stop = Stop(out.clone());
    script(&out.join("build.sh"), &[]);
    let cfg = proxy_config(&out);
    let shares = memory_shares(&out);
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("deployment.json")).unwrap())
            .unwrap();
    let gib: Vec<u64> = d["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["memory_bytes"].as_u64().unwrap() >> 30)
        .collect();
    let n = 100_000u64;
    let shapes = key_shapes(n);
    println!(
        "| hash | weights | {} |",
        shapes.iter().map(|s| s.0).collect::<Vec<_>>().join(" | ")
    );
    let hashes = [
        "md5",
        "murmur",
        "crc32a",
        "crc32",
        "crc16",
        "one_at_a_time",
        "hsieh",
        "jenkins",
        "fnv1_32",
        "fnv1a_32",
        "fnv1_64",
        "fnv1a_64",
    ];
    let pass = password(&out);
    for hash in hashes {
        for tuned in [false, true] {
            let mut yml = String::new();
            let proxy = free_port();
            yml.push_str(&format!(
                "m:\n  listen: 127.0.0.1:{proxy}\n  hash: {hash}\n  distribution: ketama\n  redis: true\n  redis_auth: {pass}\n  servers:\n"
            ));
            for (i, s) in cfg.servers.iter().enumerate() {
                let w = if tuned { s.weight as u64 } else { gib[i] };
                let name = if tuned {
                    s.name.clone()
                } else {
                    format!("shard-{i}")
                };
                yml.push_str(&format!("   - {}:{w} {name}\n", s.addr()));
            }
            let conf = dir.path().join(format!("{hash}-{tuned}.yml"));
            std::fs::write(&conf, yml).unwrap();
            let _proxy = common::Proc(
                Command::new("nutcracker")
                    .arg("-c")
                    .arg(&conf)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap(),
            );
            let mut row = format!("| {hash} | {} |", if tuned { "tuned" } else { "GiB" });
            for (shape, keys) in &shapes {
                // fresh shards for each count: a flushed engine still scans its tombstones
                for s in &cfg.servers {
                    let host = out.join("hosts").join(&s.name);
                    let o = Command::new(host.join("start.sh"))
                        .env(
                            "COSINE_DATA",
                            dir.path()
                                .join(format!("data-{hash}-{tuned}-{shape}-{}", s.name)),
                        )
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                }
                let mut c = Resp::connect(&format!("127.0.0.1:{proxy}"), &pass);
                let pairs: Vec<(String, String)> =
                    keys.iter().map(|k| (k.clone(), "v".into())).collect();
                c.set_all(&pairs);
                let mut worst = 0.0f64;
                for (s, share) in cfg.servers.iter().zip(&shares) {
                    let mut sc = redis::Client::open(format!("redis://:{pass}@{}/", s.addr()))
                        .unwrap()
                        .get_connection()
                        .unwrap();
                    let held: i64 = redis::cmd("DBSIZE").query(&mut sc).unwrap();
                    worst = worst.max((held as f64 / (n as f64 * share) - 1.0).abs());
                }
                for s in &cfg.servers {
                    let _ = Command::new(out.join("hosts").join(&s.name).join("stop.sh")).output();
                }
                row.push_str(&format!(" {:.1}% |", 100.0 * worst));
            }
            println!("{row}");
        }
    }
}
