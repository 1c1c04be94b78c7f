//! The layering test (issue 27): reads the `use` graph of the harness and of the reference
//! from their sources and fails on any import circle between files (a parent and its own
//! child using each other excepted) and on any import against the declared layer order.
//! CONTRIBUTING.md "Architecture" says what it enforces; the tables below are that
//! declaration.
#![expect(clippy::expect_used)] // tests: a panic is the failure report

#[path = "layering/graph.rs"]
mod graph;

use std::path::{Path, PathBuf};

use graph::{CrateSpec, Graph};

/// A layer: the files under `prefix` (a folder `x/` or one file `x.rs`, relative to the
/// crate's `src/`), its rank (a file may import only files of a lower rank, or of its own
/// group), and whether it belongs to a wing kept apart (the first folder of `prefix`: files of
/// two such wings never import each other, at any rank).
struct Layer {
    prefix: &'static str,
    rank: u8,
    apart: bool,
}

const fn layer(prefix: &'static str, rank: u8, apart: bool) -> Layer {
    Layer {
        prefix,
        rank,
        apart,
    }
}

/// The harness: bytes and JSON at the bottom; the protocol-free engine core; the capabilities a
/// protocol may offer (fuzzing, models, init, estimates, histories); the protocol wings, which
/// import nothing of one another; the command layer (registry, launcher, CLI) on top.
const HARNESS: &[Layer] = &[
    layer("transport/", 0, false),
    layer("json/", 0, false),
    layer("engine/", 1, false),
    layer("capability/", 2, false),
    layer("parley/", 3, true),
    layer("ssp/", 3, true),
    layer("mcp/", 3, true),
    layer("registry.rs", 4, false),
    layer("launcher.rs", 4, false),
    layer("reference.rs", 4, false),
    layer("reference_runs.rs", 4, false),
    layer("faults.rs", 4, false),
    layer("variants.rs", 4, false),
    layer("term.rs", 4, false),
    layer("cli/", 4, false),
    layer("main.rs", 5, false),
    layer("lib.rs", 5, false),
];

/// The reference: pure domain rules (and the service contract's data types); the store; the
/// seeded faults' hooks, which take domain and store types only; the services (one
/// permission check); the wire adapters; the server around them; the process entry points.
const REFERENCE: &[Layer] = &[
    layer("domain/", 0, false),
    layer("logging.rs", 0, false),
    layer("config.rs", 1, false),
    layer("store/", 1, false),
    layer("faults.rs", 2, false),
    layer("faults/", 2, false),
    layer("parley/service/", 3, true),
    layer("ssp/", 3, true),
    layer("api/", 4, false),
    layer("parley/api/", 5, true),
    layer("parley/mod.rs", 5, true),
    layer("ssp/api.rs", 5, true),
    layer("openapi/", 6, false),
    layer("variants.rs", 7, false),
    layer("variants/", 7, false),
    layer("server.rs", 8, false),
    layer("server/", 8, false),
    layer("soak/", 9, false),
    layer("main.rs", 10, false),
    layer("lib.rs", 10, false),
];

/// The layer of `file`: the longest prefix that holds it.
fn layer_of<'a>(layers: &'a [Layer], file: &Path) -> Option<&'a Layer> {
    let f = file.to_string_lossy();
    layers
        .iter()
        .filter(|l| {
            if l.prefix.ends_with('/') {
                f.starts_with(l.prefix)
            } else {
                f == l.prefix
            }
        })
        .max_by_key(|l| l.prefix.len())
}

/// Every breach of `layers` in `graph`, in words: circles, files outside every layer, imports
/// against the order, imports between groups kept apart.
fn breaches(graph: &Graph, layers: &[Layer]) -> Vec<String> {
    let mut out = Vec::new();
    for circle in graph::circles(graph) {
        let arrows: Vec<String> = circle
            .iter()
            .map(|(a, b, names)| {
                format!(
                    "    {} -> {}: {}",
                    a.display(),
                    b.display(),
                    names.join(", ")
                )
            })
            .collect();
        out.push(format!("import circle:\n{}", arrows.join("\n")));
    }
    for file in &graph.files {
        if layer_of(layers, file).is_none() {
            out.push(format!("{} belongs to no declared layer", file.display()));
        }
    }
    for (from, tos) in &graph.arrows {
        let Some(a) = layer_of(layers, from) else {
            continue;
        };
        for (to, names) in tos {
            let Some(b) = layer_of(layers, to) else {
                continue;
            };
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            // A wing is the first folder of a group kept apart (`parley/service/` and
            // `parley/api/` are one wing): two wings never import each other, at any rank.
            let wing = |l: &Layer| l.prefix.split('/').next().unwrap_or(l.prefix);
            let other_wing = a.apart && b.apart && wing(a) != wing(b);
            if b.rank > a.rank {
                out.push(format!(
                    "upward import: {} (rank {} `{}`) -> {} (rank {} `{}`): {}",
                    from.display(),
                    a.rank,
                    a.prefix,
                    to.display(),
                    b.rank,
                    b.prefix,
                    names.join(", ")
                ));
            } else if other_wing {
                out.push(format!(
                    "import between groups kept apart: {} -> {}: {}",
                    from.display(),
                    to.display(),
                    names.join(", ")
                ));
            }
        }
    }
    out
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn assert_layered(src: &Path, lib_name: &str, layers: &[Layer]) {
    let spec = CrateSpec {
        src,
        roots: &["lib.rs", "main.rs"],
        lib_name,
    };
    let graph = graph::read(&spec).unwrap_or_else(|e| panic!("reading {}: {e}", src.display()));
    assert!(
        graph.files.len() > 10,
        "{}: only {} files read",
        src.display(),
        graph.files.len()
    );
    let found = breaches(&graph, layers);
    assert!(
        found.is_empty(),
        "{}: {} breaches of the layering:\n{}",
        src.display(),
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_harness_keeps_its_layers() {
    assert_layered(&workspace().join("harness/src"), "conform", HARNESS);
}

#[test]
fn the_reference_keeps_its_layers() {
    assert_layered(
        &workspace().join("reference-impl/src"),
        "reference_impl",
        REFERENCE,
    );
}

/// The test bites: a planted circle, an upward import, an import between two groups kept
/// apart and a loop through a parent's own child and a sibling are each reported, with the
/// names that tie them; a parent and its own child using each other is not.
#[test]
fn a_planted_circle_and_upward_import_are_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = [
        (
            "lib.rs",
            "pub mod low;\npub mod high;\npub mod left;\npub mod right;\npub mod family;\npub mod tree;\n",
        ),
        (
            "low.rs",
            "pub struct Low;\npub fn up(h: crate::high::High) -> crate::high::High { h }\n",
        ),
        ("high.rs", "use crate::low::Low;\npub struct High(Low);\n"),
        ("left/mod.rs", "mod inner;\npub use inner::Left;\n"),
        (
            "left/inner.rs",
            "pub struct Left;\n#[cfg(test)]\nmod tests { use crate::low::Low; }\n",
        ),
        (
            "right/mod.rs",
            "pub fn f() { let _ = format!(\"{:?}\", super::left::Left); }\n",
        ),
        ("main.rs", "fn main() { let _ = toy::low::Low; }\n"),
        // A loop through the parent's own child and a sibling (reported), and a parent and its
        // own child using each other (the folder-module pattern: allowed).
        (
            "family.rs",
            "mod a;\nmod b;\npub struct Shared;\npub fn go() { a::run(); }\n",
        ),
        (
            "family/a.rs",
            "pub fn run() { let _ = super::Shared; super::b::help(); }\n",
        ),
        (
            "family/b.rs",
            "pub fn help() { let _ = crate::family::Shared; }\n",
        ),
        (
            "tree.rs",
            "mod leaf;\npub struct Root;\npub fn go() { leaf::f(); }\n",
        ),
        ("tree/leaf.rs", "pub fn f() { let _ = super::Root; }\n"),
    ];
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let layers = [
        layer("low.rs", 0, false),
        layer("high.rs", 1, false),
        layer("left/", 1, true),
        layer("right/", 1, true),
        layer("family.rs", 1, false),
        layer("family/", 1, false),
        layer("tree.rs", 1, false),
        layer("tree/", 1, false),
        layer("lib.rs", 2, false),
        layer("main.rs", 2, false),
    ];
    let spec = CrateSpec {
        src: dir.path(),
        roots: &["lib.rs", "main.rs"],
        lib_name: "toy",
    };
    let graph = graph::read(&spec).expect("toy crate");
    let found = breaches(&graph, &layers).join("\n");
    assert!(
        found.contains("import circle:\n    high.rs -> low.rs: Low\n    low.rs -> high.rs: High"),
        "{found}"
    );
    assert!(
        found.contains(
            "upward import: low.rs (rank 0 `low.rs`) -> high.rs (rank 1 `high.rs`): High"
        ),
        "{found}"
    );
    assert!(
        found.contains("import between groups kept apart: right/mod.rs -> left/mod.rs: Left"),
        "{found}"
    );
    assert!(
        !found.contains("inner.rs -> low.rs"),
        "a cfg(test) module is not layered: {found}"
    );
    assert!(
        found.contains("family/b.rs -> family.rs: Shared"),
        "a loop through a parent's child and a sibling: {found}"
    );
    assert!(
        !found.contains("tree"),
        "a parent and its own child may use each other: {found}"
    );
    assert!(
        graph.arrows[Path::new("main.rs")].contains_key(Path::new("low.rs")),
        "{:?}",
        graph.arrows
    );
    assert_eq!(
        found.lines().filter(|l| !l.starts_with("    ")).count(),
        4,
        "{found}"
    );
}
