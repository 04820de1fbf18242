//! Test helper for the crash suite: writes keys to an engine from several threads and prints one line per
//! acknowledged write (`P n` for a put of key n, `D n` for a delete), until it is killed.
//!
//! Usage: cosine-crash-writer DIR DESIGN.json START always|batch|never THREADS
//!
//! Thread t of T writes keys START + t, START + t + T, ...; after each put of a key n with n % 7 == 3 it
//! deletes its own earlier key n − 4T.

use cosine_engine::{Design, Engine, Options, SyncMode};
use std::io::Write;
use std::sync::Arc;

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(code);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        fail(
            2,
            "usage: cosine-crash-writer DIR DESIGN.json START always|batch|never THREADS",
        );
    }
    let design = std::fs::read_to_string(&args[2])
        .map_err(|e| e.to_string())
        .and_then(|t| Design::from_json(&t).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| fail(2, &e));
    let start: u64 = args[3].parse().unwrap_or_else(|_| fail(2, "START"));
    let sync = SyncMode::from_name(&args[4])
        .unwrap_or_else(|| fail(2, &format!("unknown sync mode {}", args[4])));
    let threads: u64 = args[5]
        .parse()
        .ok()
        .filter(|t| *t > 0)
        .unwrap_or_else(|| fail(2, "THREADS"));
    let engine = Engine::open_with(&args[1], &design, Options::with_sync(sync))
        .unwrap_or_else(|e| fail(1, &e.to_string()));
    let engine = Arc::new(engine);
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                let mut n = start + t;
                loop {
                    let key = format!("k{n:010}");
                    let value = format!("v{n}-{}", "y".repeat((n % 50) as usize));
                    if let Err(e) = engine.put(key.as_bytes(), value.as_bytes()) {
                        fail(1, &e.to_string());
                    }
                    // one locked write per line, so lines of several threads never interleave
                    let _ = writeln!(std::io::stdout().lock(), "P {n}");
                    if n % 7 == 3 && n >= start + 4 * threads {
                        let victim = n - 4 * threads;
                        if let Err(e) = engine.delete(format!("k{victim:010}").as_bytes()) {
                            fail(1, &e.to_string());
                        }
                        let _ = writeln!(std::io::stdout().lock(), "D {victim}");
                    }
                    n += threads;
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
}
