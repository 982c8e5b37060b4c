//! The fork-based dumper end to end: an image of this very process, verified,
//! read back at known addresses, then damaged in the ways a restart must refuse.

use std::path::PathBuf;

use mpcrs_cr::restore::chain::read_memory_at as read_memory;
use mpcrs_cr::{dump_image, verify};

fn dump(img: &std::path::Path) -> mpcrs_cr::DumpReport {
    dump_image(img)
        .unwrap()
        .expect("the snapshot was taken by this process")
}

fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mpcrs-dump-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn pattern(len: usize) -> Vec<u64> {
    (0..len as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect()
}

fn as_bytes(v: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding; the byte view covers exactly the slice.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

#[test]
fn an_image_holds_this_process_memory_and_verifies() {
    let dir = scratch("holds");
    let data = pattern(4 << 20); // 32 MiB
    let img = dir.join("process-0.img");
    let report = dump(&img);
    assert!(report.data_bytes >= 32 << 20, "{report:?}");
    assert!(!dir.join("process-0.img.tmp").exists());
    let v = verify(&img).unwrap();
    assert_eq!(v.data_bytes, report.data_bytes);
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    assert_eq!(v.header.exe.path, exe.to_string_lossy());
    // The buffer as it was at the fork, byte for byte.
    let back = read_memory(&img, data.as_ptr() as u64, data.len() * 8).unwrap();
    assert!(back == as_bytes(&data));
    // Kernel-provided mappings are recorded without contents.
    assert!(v
        .header
        .regions
        .iter()
        .filter(|r| r.path == "[vdso]" || r.path == "[vvar]")
        .all(|r| r.flags & mpcrs_cr::image::KERNEL != 0 && !r.has_data()));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Shared memory is not frozen by the fork: a thread keeps writing to it while
/// the image is written. Every region must still verify (its checksum is of the
/// bytes written).
#[test]
fn shared_memory_changing_during_the_dump_still_verifies() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = scratch("shared");
    let len = 32usize << 20;
    // SAFETY: a fresh anonymous shared mapping, unmapped at the end of the test.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    let base = p as usize;
    let stop = AtomicBool::new(false);
    let img = dir.join("p.img");
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut k = 0u64;
            while !stop.load(Ordering::Relaxed) {
                k += 1;
                for page in (0..len).step_by(4096) {
                    // SAFETY: inside the mapping; only this thread writes it.
                    unsafe { std::ptr::write_volatile((base + page) as *mut u64, k) };
                }
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        dump(&img);
        stop.store(true, Ordering::Relaxed);
    });
    verify(&img).unwrap();
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(p, len) };
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_image_is_the_memory_at_the_fork_not_later() {
    let dir = scratch("snapshot");
    let mut data = pattern(1 << 20);
    let img = dir.join("p.img");
    dump(&img);
    let before = as_bytes(&data).to_vec();
    data.iter_mut().for_each(|x| *x = !*x);
    let back = read_memory(&img, data.as_ptr() as u64, data.len() * 8).unwrap();
    assert!(back == before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corrupted_and_truncated_images_are_refused_with_file_and_region() {
    let dir = scratch("damaged");
    let data = pattern(1 << 20);
    let img = dir.join("process-3.img");
    dump(&img);
    let (_, header) = mpcrs_cr::image::read_header(&img).unwrap();
    let addr = data.as_ptr() as u64;
    let (i, r) = header
        .regions
        .iter()
        .enumerate()
        .find(|(_, r)| r.start <= addr && addr < r.end)
        .unwrap();
    let mut bytes = std::fs::read(&img).unwrap();
    let pristine = bytes.clone();
    bytes[(r.data_offset + (addr - r.start)) as usize] ^= 0x40;
    std::fs::write(&img, &bytes).unwrap();
    let e = verify(&img).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}: region {i} (", img.display()))
            && e.ends_with("corrupted (checksum mismatch)"),
        "{e}"
    );
    // A flipped bit in the region table.
    let mut bytes = pristine.clone();
    bytes[4096 + 3] ^= 1;
    std::fs::write(&img, &bytes).unwrap();
    let e = verify(&img).unwrap_err().to_string();
    assert!(e.contains("header or region table corrupted"), "{e}");
    // Cut short.
    std::fs::write(&img, &pristine[..pristine.len() - 4096]).unwrap();
    let e = verify(&img).unwrap_err().to_string();
    assert!(e.contains("truncated: region"), "{e}");
    std::fs::write(&img, b"hello").unwrap();
    let e = verify(&img).unwrap_err().to_string();
    assert!(e.contains("truncated: 5 bytes"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_dump_that_cannot_be_written_says_where_and_leaves_nothing() {
    let dir = scratch("unwritable");
    let img = dir.join("missing-subdir").join("p.img");
    let e = dump_image(&img).unwrap_err().to_string();
    assert!(
        e.contains("missing-subdir/p.img.tmp") && e.contains("cannot create"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A private anonymous mapping of `len` bytes (never freed: the test ends).
fn anonymous(len: usize) -> &'static mut [u64] {
    // SAFETY: a fresh private anonymous mapping, used only through the slice.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        std::slice::from_raw_parts_mut(p.cast(), len / 8)
    }
}

fn own_faults() -> i64 {
    // SAFETY: rusage is plain old data; getrusage fills it.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_minflt + u.ru_majflt
    }
}

/// Dumps with `staging` bytes for the stall's copies, rewrites every word
/// of `dense` and the touched pages of `sparse` while the writer runs, and
/// checks that the image holds both as they were at the fork. The page
/// faults the rewrite took, and the report.
fn dump_while_rewriting(
    staging: u64,
    dense: &mut [u64],
    sparse: &mut [u64],
) -> (i64, mpcrs_cr::DumpReport) {
    let dir = scratch(&format!("staging-{staging}"));
    let img = dir.join("process-0.img");
    // Not a copy kept aside: that would be staged too.
    for (i, w) in dense.iter_mut().enumerate() {
        *w = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    // One word in every 16th page of `sparse`: the others were never touched.
    let touched: Vec<usize> = (0..sparse.len()).step_by(512 * 16).collect();
    for &i in &touched {
        sparse[i] = i as u64 + 1;
    }
    let options = mpcrs_cr::DumpOptions {
        staging,
        ..Default::default()
    };
    let pending = match mpcrs_cr::start_dump(&img, options).unwrap() {
        mpcrs_cr::Snapshot::Writing(p) => p,
        mpcrs_cr::Snapshot::Restored => unreachable!("this process is never restored"),
    };
    let faults = own_faults();
    for w in dense.iter_mut() {
        *w = !*w;
    }
    for &i in &touched {
        sparse[i] = 0;
    }
    let faults = own_faults() - faults;
    let report = pending.wait().unwrap();
    verify(&img).unwrap();
    let back = read_memory(&img, dense.as_ptr() as u64, dense.len() * 8).unwrap();
    assert!(
        back == as_bytes(&pattern(dense.len())),
        "the dense region as at the fork"
    );
    let back = read_memory(&img, sparse.as_ptr() as u64, sparse.len() * 8).unwrap();
    for (i, w) in back.chunks(8).enumerate() {
        let want = if touched.contains(&i) {
            i as u64 + 1
        } else {
            0
        };
        assert_eq!(
            u64::from_le_bytes(w.try_into().unwrap()),
            want,
            "word {i} of the sparse region"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    (faults, report)
}

/// With staging, the regions the program rewrites are copied in the stall
/// and left out of the fork: rewriting them while the image is written takes
/// no copy-on-write fault, and the image is the memory at the fork all the
/// same (populated pages from the copy, the others as zeros). Without it,
/// every page rewritten is a fault.
#[test]
fn staged_memory_is_imaged_as_at_the_fork_and_rewritten_without_faults() {
    let dense = anonymous(64 << 20);
    let sparse = anonymous(32 << 20);
    let pages = (64 << 20) / 4096;
    let (faults, report) = dump_while_rewriting(256 << 20, dense, sparse);
    assert!(report.cost.staged_bytes >= 64 << 20, "{report:?}");
    // The sparse region's populated pages only: 512 of its 8192.
    assert!(
        report.cost.staged_bytes < (64 << 20) + (4 << 20),
        "{report:?}"
    );
    assert!(
        faults < pages / 10,
        "{faults} faults rewriting {pages} staged pages"
    );
    let (faults, report) = dump_while_rewriting(0, dense, sparse);
    assert_eq!(report.cost.staged_bytes, 0);
    assert!(
        faults >= pages * 9 / 10,
        "{faults} faults rewriting {pages} shared pages"
    );
    assert!(report.cost.faults as i64 >= faults, "{report:?}");
}

/// A budget smaller than a region leaves that region to copy-on-write:
/// the image is right all the same.
#[test]
fn memory_beyond_the_staging_budget_is_imaged_by_copy_on_write() {
    let dense = anonymous(64 << 20);
    let sparse = anonymous(32 << 20);
    let (faults, report) = dump_while_rewriting(8 << 20, dense, sparse);
    // The sparse region's 2 MiB of populated pages fit; the dense one does not.
    assert!(report.cost.staged_bytes <= 8 << 20, "{report:?}");
    assert!(faults >= (64 << 20) / 4096 * 9 / 10, "{faults} faults");
}
