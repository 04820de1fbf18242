//! Growing from three shards to four while the proxy serves.

use super::*;

#[test]
fn growing_from_three_shards_to_four_moves_a_quarter_and_loses_nothing() {
    let _serial = serial();
    if !have_nutcracker() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let design: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/design-lsm.json")).unwrap(),
    )
    .unwrap();
    let shard =
        serde_json::json!({"vm": "r5.large", "memory_bytes": 16u64 << 30, "design": design});
    let write = |name: &str, n: usize| {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            serde_json::json!({"provider": "aws", "shards": vec![shard.clone(); n]}).to_string(),
        )
        .unwrap();
        p
    };
    let (old_json, new_json) = (write("old.json", 3), write("new.json", 4));
    let (base, old_proxy) = ports(8);
    let new_proxy = loop {
        let p = proxy_port(base..base + 8);
        if p.abs_diff(old_proxy) > 1 {
            break p;
        }
    };
    let old = dir.path().join("old");
    generate(&[
        "--deployment",
        old_json.to_str().unwrap(),
        "--out",
        old.to_str().unwrap(),
        "--name",
        "grow",
        "--base-port",
        &base.to_string(),
        "--proxy-port",
        &old_proxy.to_string(),
    ]);
    let new = dir.path().join("new");
    let o = cosine(&[
        "generate",
        "--deployment",
        new_json.to_str().unwrap(),
        "--from",
        old.to_str().unwrap(),
        "--out",
        new.to_str().unwrap(),
        "--name",
        "grow",
        "--base-port",
        &base.to_string(),
        "--proxy-port",
        &new_proxy.to_string(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("of the keys change shard"), "{printed}");
    let (old_cfg, new_cfg) = (proxy_config(&old), proxy_config(&new));
    // the kept shards keep their names and addresses; the fourth is new
    for s in &old_cfg.servers {
        assert!(new_cfg
            .servers
            .iter()
            .any(|n| n.name == s.name && n.addr() == s.addr()));
    }
    let added = new_cfg
        .servers
        .iter()
        .find(|n| old_cfg.servers.iter().all(|s| s.name != n.name))
        .unwrap()
        .clone();

    let _stop_old = Stop(old.clone());
    let _stop_new = Stop(new.clone());
    script(&old.join("start.sh"), &["--debug"]);
    let pairs: Vec<(String, String)> = (0..10_000)
        .map(|i| (format!("user{}", i * 7919), format!("v0-{i}")))
        .collect();
    let keys: Vec<String> = pairs.iter().map(|p| p.0.clone()).collect();
    let mut old_client = Resp::connect(&format!("127.0.0.1:{old_proxy}"), &password(&old));
    old_client.set_all(&pairs);
    let (old_ring, new_ring) = (old_cfg.ring(), new_cfg.ring());
    let moves = |k: &str| {
        let (a, b) = (old_ring.owner(k.as_bytes()), new_ring.owner(k.as_bytes()));
        old_cfg.servers[a.unwrap()].name != new_cfg.servers[b.unwrap()].name
    };
    let moving: Vec<usize> = (0..keys.len()).filter(|&i| moves(&keys[i])).collect();
    let share = moving.len() as f64 / keys.len() as f64;
    assert!((0.18..=0.32).contains(&share), "{share} of the keys move");
    // hashes move whole
    let hashes: Vec<String> = (0..2000)
        .map(|i| format!("profile:{i}"))
        .filter(|k| moves(k))
        .take(20)
        .collect();
    let cmds: Vec<Vec<String>> = hashes
        .iter()
        .map(|h| {
            vec![
                "HSET".into(),
                h.clone(),
                "f1".into(),
                "a".into(),
                "f2".into(),
                "b".into(),
            ]
        })
        .collect();
    assert!(old_client
        .pipeline(&cmds)
        .iter()
        .all(|r| r.as_deref() == Some(":2")));

    // the new VM's engine, from the new deployment's own directory
    script(&new.join("build.sh"), &["--debug"]);
    script(&new.join("hosts").join(&added.name).join("start.sh"), &[]);
    let state = dir.path().join("moves.state");
    let rebalance = |pass: &str| {
        let o = cosine(&[
            "rebalance",
            pass,
            "--from",
            old.to_str().unwrap(),
            "--to",
            new.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // a reader through a proxy while a pass runs: every key it reads is found
    let pass = password(&old);
    let reading = |addr: String, keys: Vec<String>| {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let pass = pass.clone();
        let t = std::thread::spawn(move || {
            let mut c = Resp::connect(&addr, &pass);
            let mut reads = 0usize;
            while !s.load(std::sync::atomic::Ordering::Relaxed) || reads == 0 {
                let got = c.get_all(&keys[..2000]);
                assert!(got.iter().all(Option::is_some), "a key went missing");
                reads += got.len();
            }
            reads
        });
        (stop, t)
    };
    let moving_keys: Vec<String> = moving.iter().map(|&i| keys[i].clone()).collect();
    let (stop, reader) = reading(format!("127.0.0.1:{old_proxy}"), moving_keys.clone());
    let copied = rebalance("copy");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert!(
        copied.contains(&format!("{} change shard", moving.len() + hashes.len())),
        "{copied}"
    );
    let mut want: std::collections::HashMap<String, Option<String>> = pairs
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    type Want = std::collections::HashMap<String, Option<String>>;
    let write = |c: &mut Resp, want: &mut Want, range: std::ops::Range<usize>, tag: &str| {
        let w: Vec<(String, String)> = moving[range]
            .iter()
            .map(|&i| (keys[i].clone(), format!("{tag}-{i}")))
            .collect();
        c.set_all(&w);
        for (k, v) in w {
            want.insert(k, Some(v));
        }
    };
    // between the copies, through the old proxy: updates, deletes, a field added to each hash
    write(&mut old_client, &mut want, 0..100, "v1");
    let dels: Vec<Vec<String>> = moving[200..220]
        .iter()
        .map(|&i| vec!["DEL".into(), keys[i].clone()])
        .collect();
    assert!(old_client
        .pipeline(&dels)
        .iter()
        .all(|r| r.as_deref() == Some(":1")));
    for &i in &moving[200..220] {
        want.insert(keys[i].clone(), None);
    }
    let cmds: Vec<Vec<String>> = hashes
        .iter()
        .map(|h| vec!["HSET".into(), h.clone(), "f3".into(), "c".into()])
        .collect();
    old_client.pipeline(&cmds);
    let again = rebalance("copy");
    assert!(
        again.contains(&format!("{} values written", 100 + hashes.len())),
        "{again}"
    );
    // after the last copy, before the switch: finish must carry these
    write(&mut old_client, &mut want, 100..150, "v1b");
    // switch: the old proxy stops, the new one serves
    script(&old.join("proxy.sh"), &["stop"]);
    script(&new.join("proxy.sh"), &[]);
    let mut c = Resp::connect(&format!("127.0.0.1:{new_proxy}"), &password(&new));
    // through the new proxy before the finish: newer than what the old shards hold (0..50 were written in
    // between too)
    write(&mut c, &mut want, 0..50, "v2");
    write(&mut c, &mut want, 150..200, "v2");
    let present: Vec<String> = moving_keys
        .iter()
        .filter(|k| want[k.as_str()].is_some())
        .cloned()
        .collect();
    let (stop, reader) = reading(format!("127.0.0.1:{new_proxy}"), present);
    let finished = rebalance("finish");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert!(
        finished.contains(&format!(
            "{} change shard",
            moving.len() - 20 + hashes.len()
        )),
        "{finished}"
    );
    // a second finish (as after one that stopped part-way) finds nothing left and deletes nothing
    let twice = rebalance("finish");
    assert!(
        twice.contains("0 change shard") && twice.contains(" 0 deleted"),
        "{twice}"
    );
    // every key reads back through the new proxy with its latest write, deleted ones stay deleted
    let all: Vec<String> = want.keys().cloned().collect();
    for (k, got) in all.iter().zip(c.get_all(&all)) {
        assert_eq!(got, want[k], "{k}");
    }
    for h in &hashes {
        let got = c.pipeline(&[
            vec!["HGET".into(), h.clone(), "f1".into()],
            vec!["HGET".into(), h.clone(), "f3".into()],
        ]);
        assert_eq!(
            got,
            vec![Some("a".to_string()), Some("c".to_string())],
            "{h}"
        );
    }
    // and each key is held once, where the new ring says
    let held = check_routing(&new_cfg);
    assert_eq!(
        held.iter().map(Vec::len).sum::<usize>(),
        keys.len() - 20 + hashes.len()
    );
}
