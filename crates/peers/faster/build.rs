//! Compiles Cosine's C interface to FASTER (`shim.cc`) against the FASTER sources that libfaster-sys builds
//! (found through the CMake cache of its build: `DEP_FASTER_ROOT`, which the `cmake` crate exports), then writes
//! the two archives' directories to the file `COSINE_FASTER_LIBS` names, for cosine-peers' build script.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=shim.cc");
    println!("cargo:rerun-if-env-changed=COSINE_FASTER_LIBS");
    let root = std::env::var("DEP_FASTER_ROOT")
        .expect("libfaster-sys did not say where it built FASTER (DEP_FASTER_ROOT)");
    let cache = std::path::Path::new(&root).join("build/CMakeCache.txt");
    let text = std::fs::read_to_string(&cache)
        .unwrap_or_else(|e| panic!("reading {}: {e}", cache.display()));
    let source = text
        .lines()
        .find_map(|l| l.strip_prefix("FASTER_SOURCE_DIR:STATIC="))
        .unwrap_or_else(|| panic!("no FASTER_SOURCE_DIR in {}", cache.display()));
    cc::Build::new()
        .cpp(true)
        .file("shim.cc")
        .include(std::path::Path::new(source).join("src"))
        .flag("-std=c++14")
        .flag("-fpermissive")
        // FASTER's headers are not warning-free; our shim is compiled with them
        .warnings(false)
        .opt_level(3)
        .cargo_metadata(false)
        .compile("cosine_faster");
    if let Some(out) = std::env::var_os("COSINE_FASTER_LIBS") {
        let shim = std::env::var("OUT_DIR").expect("OUT_DIR");
        std::fs::write(&out, format!("{shim}\n{root}/build\n"))
            .unwrap_or_else(|e| panic!("writing {}: {e}", out.to_string_lossy()));
    }
}
