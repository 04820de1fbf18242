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
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
