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
