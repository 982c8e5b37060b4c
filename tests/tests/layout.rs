//! The crates' dependencies keep their concerns apart: the launcher does not
//! link the MPI runtime, the process image knows nothing of MPI, and settings,
//! the job's proof (mpcrs-auth) and PMI-2 sit below everything. Read from `cargo metadata`, so a new
//! dependency that breaks this fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Normal (non-dev, non-build) dependencies of every workspace crate on other
/// workspace crates.
fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|n| names.contains(n))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// Every workspace crate `name` depends on, directly or not.
fn closure(deps: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(n) = todo.pop() {
        for d in deps.get(&n).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn each_crate_depends_only_on_what_its_concern_needs() {
    let deps = workspace_dependencies();
    let launch = closure(&deps, "mpcrs-launch");
    assert!(
        !launch.contains("mpcrs") && !launch.contains("mpcrs-abi"),
        "mpcrs-launch: {launch:?}"
    );
    // The checkpoint service's data and process know nothing of MPI.
    let craas = closure(&deps, "mpcrs-craas");
    assert!(
        !craas.contains("mpcrs") && !craas.contains("mpcrs-abi"),
        "mpcrs-craas: {craas:?}"
    );
    let cr = closure(&deps, "mpcrs-cr");
    assert!(
        !cr.contains("mpcrs") && !cr.contains("mpcrs-abi"),
        "mpcrs-cr: {cr:?}"
    );
    for base in ["mpcrs-settings", "mpcrs-elf", "mpcrs-auth"] {
        assert!(
            closure(&deps, base).is_empty(),
            "{base}: {:?}",
            closure(&deps, base)
        );
    }
    // PMI-2's network port takes the job's proof first.
    let pmi = closure(&deps, "mpcrs-pmi");
    assert!(pmi.iter().all(|d| d == "mpcrs-auth"), "mpcrs-pmi: {pmi:?}");
    // What the runtime and the launcher share comes from below both.
    assert!(closure(&deps, "mpcrs").contains("mpcrs-pmi"));
    assert!(launch.contains("mpcrs-pmi") && launch.contains("mpcrs-settings"));
}

#[test]
fn every_path_of_the_readme_where_is_table_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let table = readme
        .split("Where is...")
        .nth(1)
        .expect("README.md has a \"Where is...\" table");
    let table = table.split("\n\n").find(|t| t.contains('|')).unwrap();
    let mut checked = 0;
    for cell in table.split('`').skip(1).step_by(2) {
        if cell.contains('/') {
            assert!(
                root.join(cell).exists(),
                "README.md names {cell}, which does not exist"
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} paths in the table");
}
