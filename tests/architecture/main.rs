//! The workspace's architecture, checked on its sources: no crate has an import cycle between its
//! top-level modules (a sub-module counts as its parent), nor any module between its direct
//! sub-modules, so each crate reads as layers and a module can be understood, tested and moved
//! with what it uses. Run with
//! `cargo test -p launch-tests --test architecture`.

/// Which crate may depend on which, and what a user's binary and build script pull in.
mod crates;

/// A module graph and the cycles in it.
mod graph;

/// A crate's module graph, read from its `src/` with syn.
mod imports;

/// The public API of the library crates, listed with syn and compared to a committed listing.
mod public_api;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The crates whose layering is checked (not `launch-remote`: a root and three leaf modules that
/// import only the root, no layers to check).
const CRATES: [&str; 5] = ["launch", "launch-analysis", "launch-schema", "launch-engine", "cargo-launch"];

fn crate_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name)
}

/// Each crate's top-level modules form layers: a module that imports another never is imported
/// by it, directly or through others (a cycle is named with the line of every import on it).
#[test]
fn no_crate_has_an_import_cycle_between_its_top_level_modules() {
    let mut found = String::new();
    for name in CRATES {
        let graph = imports::crate_graph(&crate_dir(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        for cycle in graph.cycles() {
            write!(found, "{name}: {cycle}").unwrap();
        }
    }
    eprint!("{found}");
    assert!(found.is_empty(), "import cycles between top-level modules (a sub-module counts as its parent):\n{found}");
}

/// The same one level down: the sub-modules of each directory module (`launch::cuda`,
/// `launch_analysis`, `launch_engine::cache`, ...) form layers too.
#[test]
fn no_module_has_an_import_cycle_between_its_sub_modules() {
    let mut found = String::new();
    let (mut checked, mut imports) = (0, 0);
    for name in CRATES {
        let graphs = imports::nested_graphs(&crate_dir(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (parent, graph) in &graphs {
            checked += 1;
            imports += graph.edge_count();
            for cycle in graph.cycles() {
                write!(found, "{name}::{parent}: {cycle}").unwrap();
            }
        }
    }
    eprint!("{found}");
    assert!(checked >= 3 && imports >= 5, "only {checked} modules with sub-modules, {imports} imports between them");
    assert!(found.is_empty(), "import cycles between sibling sub-modules:\n{found}");
}

/// Guards the test above against passing on an empty reading: every crate yields modules and imports.
#[test]
fn every_crate_has_a_module_graph() {
    for name in CRATES {
        let graph = imports::crate_graph(&crate_dir(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let modules = graph.modules().count();
        assert!(modules >= 3 && graph.edge_count() >= 2, "{name}: {modules} modules, {} imports", graph.edge_count());
    }
}
