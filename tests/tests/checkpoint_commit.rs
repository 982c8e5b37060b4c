//! A checkpoint killed with SIGKILL at any moment leaves `latest` on a complete,
//! intact epoch.

use std::process::Command;
use std::time::Duration;

use mpcrs_cr::CheckpointDir;
use mpcrs_tests::program;
use rand::Rng;

#[test]
fn kill_9_during_commits_never_loses_the_restart_point() {
    let root = std::env::temp_dir().join(format!("mpcrs-commit-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut rng = rand::rng();
    let mut last_seen = 0;
    for round in 0..12 {
        let mut child = Command::new(program("commit_loop"))
            .arg(&root)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(5..120)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let dir = CheckpointDir::open(&root).unwrap();
        let Some(latest) = dir.latest().unwrap() else {
            assert_eq!(last_seen, 0, "round {round}: latest vanished");
            continue;
        };
        assert!(
            latest >= last_seen,
            "round {round}: latest went back to {latest}"
        );
        last_seen = latest;
        let epoch = dir.epoch_dir(latest);
        assert_eq!(
            std::fs::read_to_string(epoch.join("MANIFEST")).unwrap(),
            format!("epoch {latest}\n")
        );
        for p in 0..3 {
            let img = std::fs::read(epoch.join(format!("process-{p}.img"))).unwrap();
            assert_eq!(
                img.len(),
                1 << 20,
                "round {round}: epoch {latest} process {p}"
            );
            assert!(img.iter().all(|&b| b == (latest % 251) as u8));
        }
    }
    assert!(last_seen > 0, "no epoch was ever committed");
    std::fs::remove_dir_all(&root).unwrap();
}
