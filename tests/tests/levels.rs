//! Storage levels end to end, modelled on FTI's disrupt tests: a job of 4
//! processes on two hosts (network namespaces, see mpcrs_tests::netns)
//! checkpoints at every level, is killed, loses data in a different way
//! before each restart, and every restart ends with the checksum of an
//! uninterrupted run, from the cheapest level that survived. And a job killed
//! while helpers post-process an epoch keeps a usable restart point.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mpcrs_settings::JobManifest;
use mpcrs_tests::netns::Hosts;
use mpcrs_tests::{
    example, expect_success, heat_checksum, latest_epoch, run_job, text, BackgroundJob,
};

const LIMIT: Duration = Duration::from_secs(180);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-levels-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn manifest(ckpt: &Path, k: u64) -> Option<JobManifest> {
    JobManifest::read(&ckpt.join(format!("epoch-{k}/MANIFEST"))).ok()
}

/// Copies `from` to `to` as hard links (files are replaced, never changed in
/// place, so the copy stays as it was).
fn link_copy(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let s = Command::new("cp")
        .args(["-al", from.to_str().unwrap(), to.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(s.success());
}

/// Flips a byte inside the data of the image at `path` (a new file under its
/// name: a hard-linked copy keeps the old one).
fn flip(path: &Path) {
    let (_, header) = mpcrs_cr::image::read_header(path).unwrap();
    let r = header
        .regions
        .iter()
        .find(|r| r.has_data() && r.len() > 8192)
        .unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    bytes[(r.data_offset + 4100) as usize] ^= 0x20;
    let tmp = path.with_extension("flipped");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The file named `name` of epoch `k` in some node's directory under `local`.
fn find_local(local: &Path, k: u64, name: &str) -> PathBuf {
    std::fs::read_dir(local)
        .unwrap()
        .flatten()
        .map(|n| n.path().join(format!("epoch-{k}")).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no {name} of epoch {k} under {}", local.display()))
}

/// A restart of `ckpt` with `extra` options; its stdout and stderr.
fn restart(ckpt: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec!["--restart", ckpt.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run_job(&args, LIMIT);
    let (out, err) = text(&o);
    (o.status.success(), out, err)
}

/// Heat of 8 ranks in 4 processes on hosts 1 and 2, checkpointed after
/// iterations 1000 and 2000 at `levels` (inline) into `ckpt` and `local`, and
/// killed once epoch 2 is complete at every one of them (a restart from it
/// takes no other, so each scenario starts from the same files). Returns the
/// checksum of an uninterrupted run.
fn checkpointed_on_two_hosts_and_killed(
    hosts: &Hosts,
    ckpt: &Path,
    local: &Path,
    levels: &str,
) -> String {
    let heat = example("heat");
    let heat = heat.to_str().unwrap();
    let run = [heat, "512", "2999", "1000"];
    let reference = heat_checksum(&expect_success(
        &run_job(&["-n", "8", "-c", "2", run[0], run[1], run[2]], LIMIT),
        "uninterrupted heat",
    ));
    let first = hosts.list(&[1, 2]);
    let agent = hosts.agent_command();
    let mut args = vec![
        "-n",
        "8",
        "-p",
        "4",
        "--host",
        &first,
        "--launch-agent",
        &agent,
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        "--levels",
        levels,
        "--group-size",
        "4",
        "--post-processing",
        "inline",
    ];
    args.extend_from_slice(&run);
    let job = BackgroundJob::start(&args);
    let all: Vec<u8> = levels
        .split(',')
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect();
    job.wait_for("epoch 2 complete at every level", LIMIT, |_, _| {
        manifest(ckpt, 2).is_some_and(|m| m.complete == all)
    });
    let (status, _, err) = job.kill_processes();
    assert!(!status.success(), "{err}");
    reference
}

/// Checks that a restart of the job of [`checkpointed_on_two_hosts_and_killed`]
/// succeeded from epoch 2 with the uninterrupted checksum.
fn resumed_from_epoch_2(reference: &str, what: &str, (ok, out, err): &(bool, String, String)) {
    assert!(ok, "{what}: {err}");
    assert!(
        out.contains("restarted after iteration 2000"),
        "{what}: {out}{err}"
    );
    assert_eq!(heat_checksum(out), reference, "{what}: {err}");
}

#[test]
fn every_level_recovers_what_it_should_on_two_hosts_and_more_losses_fall_back_or_are_refused() {
    let hosts = Hosts::new(3, 7);
    let agent = hosts.agent_command();
    let dir = scratch("disrupt");
    let ckpt = dir.join("ckpt");
    let local = dir.join("local");
    let reference = checkpointed_on_two_hosts_and_killed(&hosts, &ckpt, &local, "1:1,2:1,3:1,4:1");
    let (h1, h2, h3) = (hosts.host(1), hosts.host(2), hosts.host(3));
    let first = format!("{h1},{h2}");
    let m = manifest(&ckpt, 2).unwrap();
    assert_eq!(m.hosts, [h1.as_str(), &h1, &h2, &h2], "{m:?}");
    let node_of = |p: usize| local.join(format!("node-{}", m.nodes[p]));
    // What every scenario starts from.
    let (ckpt0, local0) = (dir.join("ckpt.0"), dir.join("local.0"));
    link_copy(&ckpt, &ckpt0);
    link_copy(&local, &local0);
    let fresh = || {
        link_copy(&ckpt0, &ckpt);
        link_copy(&local0, &local);
    };
    let same_hosts = ["--host", &first, "--launch-agent", &agent];
    let finishes = |what: &str, out: &str, err: &str, ok: bool| {
        resumed_from_epoch_2(&reference, what, &(ok, out.to_string(), err.to_string()))
    };

    // (a) Nothing lost: every process from its L1 image.
    let (ok, out, err) = restart(&ckpt, &same_hosts);
    finishes("(a)", &out, &err, ok);
    assert!(!err.contains("restoring it from"), "(a): {err}");

    // (b) Host 2 lost with its node-local storage: its processes from the
    // copies their partners keep on host 1, restarted on hosts 1 and 3.
    fresh();
    std::fs::remove_dir_all(node_of(2)).unwrap();
    let other = format!("{h1},{h3}");
    let (ok, out, err) = restart(&ckpt, &["--host", &other, "--launch-agent", &agent]);
    finishes("(b)", &out, &err, ok);
    for p in [2, 3] {
        assert!(
            err.contains(&format!("process {p}: L1 image missing on host {h2}"))
                && err.contains(&format!("restoring it from the partner copy on host {h1}")),
            "(b): {err}"
        );
    }
    assert!(
        !err.contains("process 0:") && !err.contains("process 1:"),
        "(b): {err}"
    );

    // (c) Process 1's image and its partner's copy of it lost: rebuilt from
    // the Reed-Solomon parity of its group.
    fresh();
    std::fs::remove_file(node_of(1).join("epoch-2/process-1.img")).unwrap();
    std::fs::remove_file(find_local(&local, 2, "partner-of-1.img")).unwrap();
    let (ok, out, err) = restart(&ckpt, &same_hosts);
    finishes("(c)", &out, &err, ok);
    assert!(
        err.contains("process 1: L1 image missing")
            && err.contains("partner copy missing")
            && err.contains("rebuilt from the Reed-Solomon parity of its group")
            && err.contains("restoring it from L3"),
        "(c): {err}"
    );
    assert!(!err.contains("restoring it from L4"), "(c): {err}");

    // (d) One byte flipped in two images of the group, and in their partner
    // copies: detected, and both rebuilt from L3.
    fresh();
    for p in [0, 2] {
        flip(&node_of(p).join(format!("epoch-2/process-{p}.img")));
        flip(&find_local(&local, 2, &format!("partner-of-{p}.img")));
    }
    let (ok, out, err) = restart(&ckpt, &same_hosts);
    finishes("(d)", &out, &err, ok);
    for p in [0, 2] {
        assert!(
            err.contains(&format!("process {p}: L1 image region"))
                && err.contains("checksum mismatch")
                && err.contains("restoring it from L3"),
            "(d): {err}"
        );
    }

    // (e) Every node-local directory lost: every process from L4, epoch 2's
    // (incremental) images and those of epoch 1 they apply to.
    fresh();
    std::fs::remove_dir_all(&local).unwrap();
    let (ok, out, err) = restart(&ckpt, &same_hosts);
    finishes("(e)", &out, &err, ok);
    for k in [1, 2] {
        assert_eq!(
            err.matches(&format!(
                "restoring it from L4 ({}/epoch-{k}/",
                ckpt.display()
            ))
            .count(),
            4,
            "(e): {err}"
        );
    }

    // (f) More lost than any level rebuilds (node-local storage and one L4
    // image): --epoch 2 is refused naming what is missing, and a plain
    // restart falls back to epoch 1.
    fresh();
    std::fs::remove_dir_all(&local).unwrap();
    std::fs::remove_file(ckpt.join("epoch-2/process-3.img")).unwrap();
    let (ok, _, err) = restart(&ckpt, &["--epoch", "2"]);
    assert!(!ok, "(f): {err}");
    assert!(
        err.contains("epoch-2: no level recovers process 3")
            && err.contains("L4 image missing")
            && err.contains("epoch-2/process-3.img"),
        "(f): {err}"
    );
    let (ok, out, err) = restart(&ckpt, &same_hosts);
    assert!(ok, "(f): {err}");
    assert!(
        err.contains("epoch-2 cannot be restored") && err.contains("trying the epoch before"),
        "(f): {err}"
    );
    assert!(out.contains("restarted after iteration 1000"), "(f): {out}");
    assert_eq!(heat_checksum(&out), reference, "(f): {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Killed while its helpers copy and encode an epoch, a job restarts from a
/// usable epoch; the epoch before it is complete at L2 and L3, and
/// mpcrs-ckpt verify says it can be restored.
#[test]
fn a_job_killed_during_post_processing_restarts_with_the_uninterrupted_checksum() {
    let dir = scratch("during");
    let ckpt = dir.join("ckpt");
    let local = dir.join("local");
    let heat = example("heat");
    let heat = heat.to_str().unwrap();
    let run = [heat, "128", "4000", "250"];
    let reference = heat_checksum(&expect_success(
        &run_job(&["-n", "8", "-c", "2", run[0], run[1], run[2]], LIMIT),
        "uninterrupted heat",
    ));
    let mut args = vec![
        "-n",
        "8",
        "-p",
        "4",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        "--levels",
        "1:1,2:1,3:1,4:1",
        "--keep",
        "3",
    ];
    args.extend_from_slice(&run);
    let job = BackgroundJob::start(&args);
    // Killed once an epoch committed while its other levels are not made yet.
    let under_way = |ckpt: &Path| {
        latest_epoch(ckpt).is_some_and(|k| {
            k >= 2 && manifest(ckpt, k).is_some_and(|m| m.complete.len() < m.levels.len())
        })
    };
    job.wait_for("post-processing under way", LIMIT, |_, _| under_way(&ckpt));
    let (status, _, err) = job.kill_processes();
    assert!(!status.success(), "{err}");
    let k = latest_epoch(&ckpt).unwrap();
    let before = manifest(&ckpt, k - 1).unwrap();
    // Work shared with other processes is finished before the next
    // checkpoint; L4 may have been stopped by it.
    assert!(
        before.complete.starts_with(&[1, 2, 3]),
        "epoch {}: {before:?}",
        k - 1
    );
    let verify = mpcrs_tests::mpcrs_ckpt(&[
        "verify",
        ckpt.to_str().unwrap(),
        "--epoch",
        &(k - 1).to_string(),
    ]);
    let (vout, verr) = text(&verify);
    assert!(verify.status.success(), "{vout}{verr}");
    assert!(vout.contains("every process can be restored"), "{vout}");
    let (ok, out, err) = restart(&ckpt, &[]);
    assert!(ok, "{err}");
    assert!(out.contains("restarted after iteration"), "{out}{err}");
    assert_eq!(heat_checksum(&out), reference, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Hosts whose node-local disks are private (each host sees its own at the
/// same path; the launcher's host sees none of them): the restart asks each
/// host, through the launch agent, what it keeps, restores every process
/// from its L1 image in place when nothing is lost, and brings over from the
/// host that keeps it what a process needs on another host (a partner's copy
/// when a host is lost, the shards of an L3 rebuild).
#[test]
fn with_private_node_local_disks_restarts_read_l1_in_place_and_bring_what_another_host_needs() {
    let hosts = Hosts::new(3, 8);
    let agent = hosts.agent_command();
    let dir = scratch("private");
    let ckpt = dir.join("ckpt");
    let local = dir.join("local");
    hosts.private_disks(&local);
    let reference = checkpointed_on_two_hosts_and_killed(&hosts, &ckpt, &local, "1:1,2:1,3:1");
    let (h1, h2, h3) = (hosts.host(1), hosts.host(2), hosts.host(3));
    let first = format!("{h1},{h2}");
    // Each host kept its own files; this host sees none.
    assert_eq!(std::fs::read_dir(&local).unwrap().count(), 0);
    let m = manifest(&ckpt, 2).unwrap();
    let disk_of = |p: usize| {
        let k = if m.hosts[p] == h1 { 1 } else { 2 };
        Hosts::disk(&local, k).join(format!("node-{}", m.nodes[p]))
    };
    for p in 0..4 {
        assert!(disk_of(p)
            .join(format!("epoch-2/process-{p}.img"))
            .is_file());
    }
    let (ckpt0, disk1, disk2) = (dir.join("ckpt.0"), dir.join("disk1.0"), dir.join("disk2.0"));
    link_copy(&ckpt, &ckpt0);
    link_copy(&Hosts::disk(&local, 1), &disk1);
    link_copy(&Hosts::disk(&local, 2), &disk2);
    let fresh = || {
        link_copy(&ckpt0, &ckpt);
        link_copy(&disk1, &Hosts::disk(&local, 1));
        link_copy(&disk2, &Hosts::disk(&local, 2));
    };
    let finishes = |what: &str, out: &str, err: &str, ok: bool| {
        resumed_from_epoch_2(&reference, what, &(ok, out.to_string(), err.to_string()))
    };

    // (a) Nothing lost: every process from its L1 image, read where it is.
    let (ok, out, err) = restart(&ckpt, &["--host", &first, "--launch-agent", &agent]);
    finishes("(a)", &out, &err, ok);
    assert!(!err.contains("restoring it from"), "(a): {err}");
    assert!(!err.contains("brought from"), "(a): {err}");

    // (b) Host 2 lost with its disk: its processes from the copies their
    // partners keep on host 1, brought over for host 3.
    fresh();
    std::fs::remove_dir_all(Hosts::disk(&local, 2)).unwrap();
    std::fs::create_dir_all(Hosts::disk(&local, 2)).unwrap();
    let other = format!("{h1},{h3}");
    let (ok, out, err) = restart(&ckpt, &["--host", &other, "--launch-agent", &agent]);
    finishes("(b)", &out, &err, ok);
    for p in [2, 3] {
        assert!(
            err.contains(&format!("process {p}: L1 image missing on host {h2}"))
                && err.contains(&format!("restoring it from the partner copy on host {h1}")),
            "(b): {err}"
        );
        assert!(
            err.contains(&format!("mpcrs-run: process {p}: "))
                && err.contains(&format!("brought from host {h1} (it restarts on {h3})")),
            "(b): {err}"
        );
    }
    assert!(!err.contains("restoring it from L4"), "(b): {err}");

    // (b2) Nothing lost, but processes 2 and 3 restart on host 3: their L1
    // images, on host 2's disk, are brought from there.
    fresh();
    let (ok, out, err) = restart(&ckpt, &["--host", &other, "--launch-agent", &agent]);
    finishes("(b2)", &out, &err, ok);
    assert!(!err.contains("restoring it from"), "(b2): {err}");
    for p in [2, 3] {
        assert!(
            err.contains(&format!("mpcrs-run: process {p}: "))
                && err.contains(&format!(
                    "process-{p}.img brought from host {h2} (it restarts on {h3})"
                )),
            "(b2): {err}"
        );
    }
    assert!(
        !err.contains("mpcrs-run: process 0:") && !err.contains("mpcrs-run: process 1:"),
        "(b2): {err}"
    );

    // (c) Process 1's image and its partner's copy of it lost: rebuilt from
    // the parity and images of its group, brought from both hosts.
    fresh();
    std::fs::remove_file(disk_of(1).join("epoch-2/process-1.img")).unwrap();
    let copy = find_local(&Hosts::disk(&local, 2), 2, "partner-of-1.img");
    std::fs::remove_file(copy).unwrap();
    let (ok, out, err) = restart(&ckpt, &["--host", &first, "--launch-agent", &agent]);
    finishes("(c)", &out, &err, ok);
    assert!(
        err.contains("process 1: L1 image missing")
            && err.contains("partner copy missing")
            && err.contains("rebuilt from the Reed-Solomon parity of its group")
            && err.contains("restoring it from L3"),
        "(c): {err}"
    );
    // The hosts' disks are under `dir` too.
    std::fs::remove_dir_all(&dir).unwrap();
}
