//! Helpers shared by the tests that run generated engines and deployments.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command};

/// Runs the `cosine` binary.
pub fn cosine(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cosine"))
        .args(args)
        .output()
        .unwrap()
}

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// One target directory for every generated project, so that the engine crates compile once.
pub fn shared_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generated")
}

/// A port nothing listens on now.
///
/// The port is below Linux's ephemeral range (32768-60999), so the outgoing connections a test makes before it
/// starts its server cannot take it as their local port (nutcracker then exits without a word). It is drawn at
/// random from 20000-32767, so tests running at once rarely meet.
pub fn free_port() -> u16 {
    use rand::Rng;
    let mut rng = rand::rng();
    loop {
        let p = rng.random_range(20_000..32_700u16);
        if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
}

/// A child process killed when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether nutcracker is installed; CI installs it, so there a missing one fails the test.
pub fn have_nutcracker() -> bool {
    if Command::new("nutcracker").arg("--version").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must have nutcracker installed (Debian package nutcracker)"
    );
    eprintln!("nutcracker is not installed (Debian package nutcracker): skipping");
    false
}
