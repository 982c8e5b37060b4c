//! The runtime's modules fall into concepts (MPI semantics, the fabric between
//! processes, checkpoint coordination, and the base both build on), and the
//! imports between concepts go one way: no import circle is wider than one
//! concept. Read from the sources, so a new `use` that closes a circle fails
//! here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The concept of a source file of runtime/src.
fn concept(rel: &Path) -> &'static str {
    let first = rel
        .components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .unwrap_or("");
    match first.trim_end_matches(".rs") {
        "remote" => "fabric",
        "checkpoint" => "checkpoint",
        "config" | "process" | "message" | "request" | "error" | "consts" | "waits" => "base",
        _ => "mpi",
    }
}

/// The concept a `crate::NAME` path names: a module, or an item lib.rs
/// re-exports from one (`pub use MODULE::...NAME...;`).
fn concept_of_module(name: &str) -> &'static str {
    let module = if name.starts_with(|c: char| c.is_lowercase()) && !is_reexport(name) {
        name.to_string()
    } else {
        let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
            .unwrap();
        let path = lib
            .split(';')
            .filter_map(|s| s.find("pub use ").map(|i| &s[i + "pub use ".len()..]))
            .find(|s| mentions(s, name))
            .unwrap_or_else(|| {
                panic!("crate::{name} is neither a module nor re-exported by lib.rs")
            });
        path.split("::").next().unwrap().trim().to_string()
    };
    if module.starts_with("mpcrs_") {
        return "another crate";
    }
    concept(Path::new(&format!("{module}.rs")))
}

/// Whether `name` is an item lib.rs re-exports (a function, say) rather than a module.
fn is_reexport(name: &str) -> bool {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    !lib.contains(&format!("mod {name};"))
}

fn mentions(stmt: &str, name: &str) -> bool {
    stmt.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == name)
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `crate::NAME` a file names, and whether it names a grouped
/// `crate::{...}` import (not allowed: it would hide modules from this test).
fn crate_paths(text: &str) -> (BTreeSet<String>, bool) {
    let mut names = BTreeSet::new();
    let mut grouped = false;
    for (i, _) in text.match_indices("crate::") {
        // `mpcrs_cr::x` and the like are other crates, not this one.
        let before = text[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        if rest.starts_with('{') {
            grouped = true;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.insert(name);
        }
    }
    (names, grouped)
}

#[test]
fn imports_between_concepts_go_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut why: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        if rel == Path::new("lib.rs") {
            continue; // re-exports only
        }
        let text = std::fs::read_to_string(f).unwrap();
        let (names, grouped) = crate_paths(&text);
        assert!(!grouped, "{}: grouped crate::{{...}} import", rel.display());
        let from = concept(rel);
        for n in &names {
            let to = concept_of_module(n);
            if to != from && to != "another crate" {
                edges.entry(from).or_default().insert(to);
                why.entry((from, to))
                    .or_insert_with(|| format!("{} uses crate::{n}", rel.display()));
            }
        }
    }
    // Depth-first search for a circle in the concept graph.
    fn visit<'a>(
        n: &'a str,
        edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|&p| p == n) {
            let mut circle = path[i..].to_vec();
            circle.push(n);
            return Some(circle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n);
        for &m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n);
        None
    }
    let mut done = BTreeSet::new();
    for &n in edges.keys() {
        if let Some(circle) = visit(n, &edges, &mut Vec::new(), &mut done) {
            let steps: Vec<String> = circle
                .windows(2)
                .map(|w| why[&(w[0], w[1])].clone())
                .collect();
            panic!("import circle {circle:?}:\n{}", steps.join("\n"));
        }
    }
    // The base imports nothing above it.
    assert!(edges.get("base").is_none_or(|s| s.is_empty()), "{edges:?}");
    // Checkpoint coordination reaches the fabric through its interface only.
    assert!(!edges["checkpoint"].contains("fabric"), "{edges:?}");
}

#[test]
fn a_circle_is_found_when_there_is_one() {
    // The detector itself: a file of the fabric naming MPI semantics.
    let (names, grouped) = crate_paths("use crate::comm::CommShared; mpcrs_cr::x; crate::{a, b}");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        vec!["comm".to_string()]
    );
    assert!(grouped);
    assert_eq!(concept(Path::new("remote/deliver.rs")), "fabric");
    assert_eq!(concept_of_module("comm"), "mpi");
}
