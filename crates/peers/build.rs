//! With the `faster` feature: builds the package in `faster/` (FASTER from libfaster-sys's sources, and our C
//! interface to it) with cargo, in a target directory of its own under OUT_DIR, and links its archives. It
//! cannot be an ordinary dependency: libfaster-sys's bindgen 0.50 and RocksDB's bindgen 0.64 link two clang-sys
//! versions that both declare `links = "clang"`, which cargo refuses in one graph. Without the feature: nothing.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_FASTER").is_none() {
        return;
    }
    for f in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "shim.cc",
        "src/lib.rs",
        "offline.cmake",
        "toolchain.cmake",
    ] {
        println!("cargo:rerun-if-changed=faster/{f}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let libs = out.join("faster-libs.txt");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--locked", "--manifest-path"])
        .arg(manifest.join("faster/Cargo.toml"))
        .arg("--target-dir")
        .arg(out.join("faster-target"))
        .env("COSINE_FASTER_LIBS", &libs)
        // this build's compiler settings and wrappers (clippy's, with its -D warnings) are not the nested build's
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("running cargo for the FASTER build (crates/peers/faster)");
    assert!(
        status.success(),
        "building FASTER failed (crates/peers/faster; Debian packages: cmake g++ libaio-dev libtbb-dev uuid-dev googletest libclang-dev)"
    );
    let text = std::fs::read_to_string(&libs)
        .unwrap_or_else(|e| panic!("reading {}: {e}", libs.display()));
    let mut dirs = text.lines();
    let (shim, faster) = (
        dirs.next().expect("shim dir"),
        dirs.next().expect("FASTER dir"),
    );
    println!("cargo:rustc-link-search=native={shim}");
    println!("cargo:rustc-link-lib=static=cosine_faster");
    println!("cargo:rustc-link-search=native={faster}");
    println!("cargo:rustc-link-lib=static=faster");
    // what libfaster-sys links FASTER with
    for lib in [
        "stdc++fs", "uuid", "tbb", "aio", "stdc++", "pthread", "m", "gcc",
    ] {
        println!("cargo:rustc-link-lib={lib}");
    }
}
