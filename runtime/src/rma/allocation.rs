//! Memory a window allocates: for MPI_Win_allocate, heap memory of the
//! member; for MPI_Win_allocate_shared, one area for the members of the node,
//! each member's part after the previous one's — heap memory when they all
//! live in this process, else a POSIX shared-memory segment every process of
//! the node maps (made by the process of the window's first member, unlinked
//! as soon as every process mapped it, so nothing is left behind).
//!
//! A checkpoint by MPIX_Checkpoint keeps such a segment: each image holds
//! its contents, and a restored job makes it again and maps it where it was
//! in every process ([`rebuild`]).

use std::sync::Mutex;

use crate::checkpoint::Rebuild;

/// A node segment mapped in this process, as a restore makes it again.
struct Segment {
    /// Where and how long the mapping is (the same in the image).
    addr: usize,
    len: usize,
    /// This process made the segment (it holds the window's first member).
    leader: bool,
    /// The segment's name in this run, and its stem for later runs.
    name: String,
    stem: String,
}

/// Node segments mapped in this process now.
static SEGMENTS: Mutex<Vec<Segment>> = Mutex::new(Vec::new());

/// Refuses checkpoints asked from outside (SIGUSR1, `--checkpoint-interval`)
/// while a node segment is mapped: the ranks of the other processes go on
/// writing it while each process takes its image, so the images would not
/// agree on its contents. MPIX_Checkpoint, which every rank enters, keeps it.
fn veto(requested: bool) -> Option<String> {
    let n = SEGMENTS.lock().unwrap().len();
    (requested && n > 0).then(|| {
        format!(
            "{n} window(s) of MPI_Win_allocate_shared span processes of this node, whose ranks \
             write their memory while the images are taken: checkpoint with MPIX_Checkpoint, or \
             free the windows first"
        )
    })
}

/// A restored process's segments: their contents came back in memory
/// private to each process; the leader makes a segment of its copy (every
/// process's copy was the same memory at the checkpoint), the others map it
/// in place of theirs, at the same address.
fn rebuild(step: Rebuild) {
    let generation = crate::remote::Fabric::get().map_or(0, |f| {
        f.generation.load(std::sync::atomic::Ordering::Acquire)
    });
    let mut all = SEGMENTS.lock().unwrap();
    for seg in all.iter_mut() {
        let name = format!("{}-g{generation}", seg.stem);
        let r = match (step, seg.leader) {
            (Rebuild::Make, true) => {
                // Left by the run that ended, or by a restart of the same
                // epoch that failed, if any.
                unlink(&seg.name);
                unlink(&name);
                remap(seg.addr, seg.len, &name, true)
            }
            (Rebuild::Open, false) => remap(seg.addr, seg.len, &name, false),
            (Rebuild::Settle, true) => {
                unlink(&name);
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(why) = r {
            mpcrs_settings::report!(
                error,
                "mpcrs: restarted, but a shared window's memory cannot be shared again: {why}"
            );
            crate::process::abort_job(1);
        }
        seg.name = name;
    }
}

/// Maps segment `name` at `[addr, addr + len)` in place of what is there:
/// made (`make`) with the contents of that memory, or opened.
fn remap(addr: usize, len: usize, name: &str, make: bool) -> Result<(), String> {
    if make {
        // A first mapping of the new segment takes the contents.
        let fresh = map_segment(name, len, true)?;
        // SAFETY: both ranges are `len` bytes of this process's mappings;
        // the temporary one is unmapped once, here.
        unsafe {
            std::ptr::copy_nonoverlapping(addr as *const u8, fresh, len);
            libc::munmap(fresh.cast(), len);
        }
    }
    let cname = std::ffi::CString::new(name).expect("no NUL in segment names");
    // SAFETY: a valid C string; the descriptor is closed below.
    let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR, 0o600) };
    if fd < 0 {
        return Err(format!("{name}: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: replaces this process's own mapping of the window's memory at
    // the same address and length (MAP_FIXED); `fd` is ours.
    let p = unsafe {
        let p = libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            0,
        );
        libc::close(fd);
        p
    };
    if p == libc::MAP_FAILED {
        return Err(format!(
            "{name} at {addr:#x}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // The window's own Allocation unmaps it when freed.
    Ok(())
}

/// An area freed with the last window that uses it.
pub(crate) struct Allocation {
    ptr: *mut u8,
    kind: Kind,
}

enum Kind {
    Heap(std::alloc::Layout),
    Mapped(usize),
}

// SAFETY: the area is plain memory, freed once, on drop; the pointer itself
// is never written after creation.
unsafe impl Send for Allocation {}
// SAFETY: as above.
unsafe impl Sync for Allocation {}

impl Allocation {
    /// `size` zeroed bytes of heap, aligned for any basic type.
    pub(crate) fn heap(size: usize) -> Allocation {
        let layout = std::alloc::Layout::from_size_align(size.max(1), 64).expect("window size");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Allocation {
            ptr,
            kind: Kind::Heap(layout),
        }
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Maps the node's shared segment `name` of `size` bytes, creating it
    /// (`create`) or opening the one another process created.
    fn segment(name: &str, size: usize, create: bool) -> Result<Allocation, String> {
        let len = size.max(1);
        map_segment(name, len, create).map(|ptr| Allocation {
            ptr,
            kind: Kind::Mapped(len),
        })
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        match self.kind {
            // SAFETY: allocated with this layout in `heap`, freed once.
            Kind::Heap(layout) => unsafe { std::alloc::dealloc(self.ptr, layout) },
            Kind::Mapped(len) => {
                // SAFETY: mapped with this length in `segment`, unmapped once.
                unsafe { libc::munmap(self.ptr.cast(), len) };
                let mut all = SEGMENTS.lock().unwrap();
                if let Some(i) = all.iter().position(|s| s.addr == self.ptr as usize) {
                    let seg = all.swap_remove(i);
                    if seg.leader {
                        unlink(&seg.name); // named again by a restore
                    }
                }
            }
        }
    }
}

/// Maps `len` bytes of segment `name`, created (`create`, sized to `len`)
/// or opened.
fn map_segment(name: &str, len: usize, create: bool) -> Result<*mut u8, String> {
    let cname = std::ffi::CString::new(name).expect("no NUL in segment names");
    let flags = if create {
        libc::O_RDWR | libc::O_CREAT | libc::O_EXCL
    } else {
        libc::O_RDWR
    };
    // SAFETY: a valid C string; the descriptor is closed below.
    let fd = unsafe { libc::shm_open(cname.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(format!(
            "shared memory segment {name}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` is ours; it is closed below whatever happens.
    let r = unsafe {
        if create && libc::ftruncate(fd, len as libc::off_t) != 0 {
            Err(std::io::Error::last_os_error())
        } else {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if p == libc::MAP_FAILED {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(p.cast::<u8>())
            }
        }
    };
    // SAFETY: `fd` is ours and no longer needed (the mapping stays).
    unsafe { libc::close(fd) };
    r.map_err(|e| {
        if create {
            unlink(name);
        }
        format!("shared memory segment {name} of {len} bytes: {e}")
    })
}

/// A new area for the members of a node in this process: heap (`segment`
/// None), or the node's segment (`Some((name, create))`, created by the
/// process of the node's first member, opened by the others). Made once per
/// window and process ([`super::memory::Shared::area`]).
pub(crate) fn node_area(size: usize, segment: Option<(&str, bool)>) -> Result<Allocation, String> {
    let Some((name, create)) = segment else {
        return Ok(Allocation::heap(size));
    };
    let a = Allocation::segment(name, size, create)?;
    if let Kind::Mapped(len) = a.kind {
        SEGMENTS.lock().unwrap().push(Segment {
            addr: a.ptr as usize,
            len,
            leader: create,
            name: name.to_string(),
            stem: name.to_string(),
        });
        crate::checkpoint::register_veto(veto);
        crate::checkpoint::register_rebuild(rebuild);
    }
    Ok(a)
}

/// Removes the name of a node segment once every process mapped it.
pub(crate) fn unlink(name: &str) {
    let cname = std::ffi::CString::new(name).expect("no NUL in segment names");
    // SAFETY: a valid C string.
    unsafe { libc::shm_unlink(cname.as_ptr()) };
}
