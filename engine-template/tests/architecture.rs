//! The workspace's shape, checked: the layout crates never depend on the cost model or the search (the tree's
//! shape comes from `cosine_design::shape`, which both sides use), and no source file of the engine, the
//! levels or the server grows past about 500 lines (one concept a file).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn layout_crates_never_import_the_cost_model_or_the_search() {
    let layout = [
        "crates/design",
        "crates/buffer",
        "crates/filters",
        "crates/fence-pointers",
        "crates/levels",
        "engine-template",
    ];
    for dir in layout {
        let toml = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        for upward in ["cosine-cost-model", "cosine-search", "cosine-cloud-pricing"] {
            assert!(
                !toml.contains(upward),
                "{dir}/Cargo.toml depends on {upward}: the arrows run from the model to the layout, never back"
            );
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn engine_levels_and_server_files_stay_small() {
    let mut files = Vec::new();
    for dir in [
        "engine-template/src",
        "crates/levels/src",
        "crates/server/src",
    ] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 10);
    for f in files {
        let lines = std::fs::read_to_string(&f).unwrap().lines().count();
        assert!(
            lines <= 520,
            "{} has {lines} lines: split it by concept",
            f.display()
        );
    }
}
