//! Nothing in Rust: this package exists for its build script, which compiles Cosine's C interface to FASTER
//! (`shim.cc`) against the FASTER sources its dependency libfaster-sys builds, and reports where both archives
//! are.
