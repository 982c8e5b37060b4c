//! mpcrs-ckpt on real images: `ls` lists complete and partial epochs with the
//! images each level holds; `verify` checks every level's image of every
//! process, names what is damaged, and fails when a process has no intact
//! image at any level.

use std::path::{Path, PathBuf};
use std::process::Command;

use mpcrs_cr::commit::write_durably;
use mpcrs_cr::{dump_image, CheckpointDir};
use mpcrs_levels::store::LocalStore;
use mpcrs_settings::JobManifest;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-ckpt-tool-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn ckpt(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_mpcrs-ckpt"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Epochs 1 and 2 of a one-process job with its L1 image in `local` and its
/// L4 copy in the epoch directory, and a partial epoch 3.
fn epochs(root: &Path, local: &Path) -> CheckpointDir {
    let dir = CheckpointDir::create(root).unwrap();
    let store = LocalStore::new(local);
    for _ in 0..2 {
        let e = dir.begin(dir.next_epoch().unwrap()).unwrap();
        let k = e.epoch();
        let l1 = store.image(0, k, 0);
        std::fs::create_dir_all(l1.parent().unwrap()).unwrap();
        dump_image(&l1).unwrap();
        let mut m = JobManifest::of_this_job(1, 1, vec!["here".into()]);
        m.local = Some(local.to_path_buf());
        m.nodes = vec![0];
        e.commit(m.to_json().as_bytes()).unwrap();
        std::fs::copy(&l1, dir.epoch_dir(k).join("process-0.img")).unwrap();
    }
    let pending = dir.begin(3).unwrap();
    write_durably(pending.dir(), "process-0.img", b"half").unwrap();
    dir
}

#[test]
fn mpcrs_ckpt_lists_and_verifies_epochs_at_every_level() {
    let root = scratch("tool");
    let local = root.with_extension("local");
    let _ = std::fs::remove_dir_all(&local);
    let dir = epochs(&root, &local);
    let r = root.to_str().unwrap();
    let (ok, out, err) = ckpt(&["ls", r]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("epoch-1  full  1 images  ")
            && lines[0].ends_with("  files L1 1/1 L4 1/1"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("epoch-2  latest  full  1 images  "),
        "{out}"
    );
    assert_eq!(
        lines[2],
        "epoch-3.partial  incomplete (not a restart point)"
    );
    let (ok, out, err) = ckpt(&["verify", r]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("epoch-2/process-0.img: ok (L1 (local), "),
        "{out}"
    );
    assert!(
        out.contains("ckpt") || out.contains("epoch-2/process-0.img: ok (L4 (global), "),
        "{out}"
    );

    // L1 of epoch 1 damaged: named, and the epoch still has an intact L4.
    let l1 = LocalStore::new(&local).image(0, 1, 0);
    let len = std::fs::metadata(&l1).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&l1)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    let (ok, out, err) = ckpt(&["verify", r, "--epoch", "1"]);
    assert!(
        !ok && out.contains(&format!("{}: damaged (L1 (local))", l1.display())),
        "{out}{err}"
    );
    assert!(
        err.contains(&format!("{}: truncated", l1.display())),
        "{err}"
    );
    assert!(!err.contains("no level recovers"), "{err}");
    // And its L4 gone too: no intact image of the process.
    std::fs::remove_file(dir.epoch_dir(1).join("process-0.img")).unwrap();
    let (ok, out, err) = ckpt(&["ls", r]);
    assert!(
        ok && out
            .lines()
            .next()
            .unwrap()
            .ends_with("  files L1 1/1 L4 0/1"),
        "{out}{err}"
    );
    let (ok, _, err) = ckpt(&["verify", r, "--epoch", "1"]);
    assert!(
        !ok && err.contains("epoch-1: no level recovers process 0"),
        "{err}"
    );
    let (ok, _, err) = ckpt(&["verify", r, "--epoch", "3"]);
    assert!(
        !ok && err.contains("epoch-3: not a complete epoch"),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&local).unwrap();
}
