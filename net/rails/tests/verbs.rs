//! The ibverbs driver against the machine's own view of its RDMA devices
//! (/sys/class/infiniband): a device there must be listed, and none there must be
//! reported as "no RDMA device" (or "not built" without the cargo feature).

use mpcrs_rails::verbs::{device_names, VerbsError};

fn sysfs_devices() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/infiniband")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Whether this build has the driver (a value, so that the checks read as such).
fn built() -> bool {
    cfg!(feature = "ibverbs")
}

#[test]
fn devices_agree_with_sysfs() {
    let expected = sysfs_devices();
    match device_names() {
        Ok(mut names) => {
            assert!(built(), "a build without ibverbs listed devices");
            names.sort();
            assert_eq!(names, expected);
        }
        Err(VerbsError::NotBuilt) => assert!(!built()),
        Err(e @ VerbsError::NoDevice(_)) => {
            assert!(built());
            assert!(expected.is_empty(), "{e} but sysfs lists {expected:?}");
            assert!(e.to_string().starts_with("no RDMA device: "), "{e}");
        }
        Err(e) => panic!("unexpected error listing RDMA devices: {e}"),
    }
}

#[cfg(feature = "ibverbs")]
#[test]
fn opening_a_rail_reports_the_missing_device() {
    use mpcrs_rails::verbs::VerbsRail;
    match VerbsRail::open() {
        Ok(rail) => assert!(sysfs_devices().contains(&rail.device().to_string())),
        Err(VerbsError::NoDevice(_)) => assert!(sysfs_devices().is_empty()),
        Err(e) => panic!("unexpected error opening the RDMA rail: {e}"),
    }
}
