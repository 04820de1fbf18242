//! Test helper for the crash suite: writes keys to an engine and prints one line per acknowledged write
//! (`P n` for a put of key n, `D n` for a delete), until it is killed.
//!
//! Usage: cosine-crash-writer DIR DESIGN.json START always|batch

use cosine_engine::{Design, Engine, Options, SyncMode};
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: cosine-crash-writer DIR DESIGN.json START always|batch");
        std::process::exit(2);
    }
    let design = match std::fs::read_to_string(&args[2])
        .map_err(|e| e.to_string())
        .and_then(|t| Design::from_json(&t).map_err(|e| e.to_string()))
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let start: u64 = args[3].parse().unwrap_or(0);
    let sync = if args[4] == "always" {
        SyncMode::Always
    } else {
        SyncMode::Batch
    };
    let engine = match Engine::open_with(&args[1], &design, Options { sync }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut n = start;
    loop {
        let key = format!("k{n:010}");
        let value = format!("v{n}-{}", "y".repeat((n % 50) as usize));
        if let Err(e) = engine.put(key.as_bytes(), value.as_bytes()) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        let _ = writeln!(out, "P {n}");
        let _ = out.flush();
        if n % 7 == 3 && n > start + 4 {
            let victim = n - 4;
            if engine.delete(format!("k{victim:010}").as_bytes()).is_err() {
                std::process::exit(1);
            }
            let _ = writeln!(out, "D {victim}");
            let _ = out.flush();
        }
        n += 1;
    }
}
