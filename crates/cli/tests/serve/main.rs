//! `cosine serve` as a client sees it: the real binary on a loopback port, driven with the `redis` crate and raw
//! sockets.
//!
//! The server and its helpers are here; the tests are in one module per concept: commands, RESP3, resilience.

mod adversary;
mod auth;
mod commands;
mod resilience;
mod resp3;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(data: &std::path::Path, extra: &[&str]) -> Server {
        let design =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/design-lsm.json");
        // loopback on a free port unless the test binds elsewhere
        let bind: &[&str] = if extra.contains(&"--bind") {
            &[]
        } else {
            &["--bind", "127.0.0.1:0"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_cosine"))
            .args([
                "serve",
                "--design",
                design.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
            ])
            .args(bind)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split(" on ")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .trim()
            .to_string();
        Server { child, addr }
    }

    fn client(&self) -> redis::Connection {
        redis::Client::open(format!("redis://{}/", self.addr))
            .unwrap()
            .get_connection()
            .unwrap()
    }

    fn raw(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// SIGTERM (what a SHUTDOWN from an unauthenticated client cannot do), then a clean exit.
    fn terminate(mut self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        assert!(self.child.wait().unwrap().success());
    }

    fn shutdown(mut self) {
        let _ = redis::cmd("SHUTDOWN").exec(&mut self.client());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "server exit: {status:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn data_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(name).tempdir().unwrap()
}
