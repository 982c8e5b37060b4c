//! Memory a window allocates: for MPI_Win_allocate, heap memory of the
//! member; for MPI_Win_allocate_shared, one area for the members of the node,
//! each member's part after the previous one's — heap memory when they all
//! live in this process, else a POSIX shared-memory segment every process of
//! the node maps (made by the process of the window's first member, unlinked
//! as soon as every process mapped it, so nothing is left behind).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// Node segments mapped in this process now.
static SEGMENTS: AtomicUsize = AtomicUsize::new(0);

/// Refuses checkpoints while a node segment is mapped: an image restores
/// memory private to its process, and the processes would no longer share it.
fn veto() -> Option<String> {
    let n = SEGMENTS.load(Ordering::Acquire);
    (n > 0).then(|| {
        format!(
            "{n} window(s) of MPI_Win_allocate_shared span processes of this node, and a \
             restart would give each process a private copy of their memory: free them before \
             the checkpoint"
        )
    })
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
        // SAFETY: `fd` is ours; on error it is closed before returning.
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
                    Ok(p)
                }
            }
        };
        // SAFETY: `fd` is ours and no longer needed (the mapping stays).
        unsafe { libc::close(fd) };
        match r {
            Ok(p) => {
                SEGMENTS.fetch_add(1, Ordering::AcqRel);
                crate::checkpoint::register_veto(veto);
                Ok(Allocation {
                    ptr: p.cast(),
                    kind: Kind::Mapped(len),
                })
            }
            Err(e) => {
                if create {
                    // SAFETY: a valid C string.
                    unsafe { libc::shm_unlink(cname.as_ptr()) };
                }
                Err(format!("shared memory segment {name} of {len} bytes: {e}"))
            }
        }
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
                SEGMENTS.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

/// Shared windows' areas in this process, by window context.
static SHARED: Mutex<Vec<(u64, Weak<Allocation>)>> = Mutex::new(Vec::new());

/// The area of shared window `context` in this process, made by the first
/// member to ask: heap (`segment` None), or the node's segment (`Some((name,
/// create))`, created by the process of the window's first member).
pub(crate) fn shared(
    context: u64,
    size: usize,
    segment: Option<(&str, bool)>,
) -> Result<Arc<Allocation>, String> {
    let mut all = SHARED.lock().unwrap();
    all.retain(|(_, w)| w.strong_count() > 0);
    if let Some(a) = all
        .iter()
        .find(|(c, _)| *c == context)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(a);
    }
    let a = Arc::new(match segment {
        None => Allocation::heap(size),
        Some((name, create)) => Allocation::segment(name, size, create)?,
    });
    all.push((context, Arc::downgrade(&a)));
    Ok(a)
}

/// Removes the name of a node segment once every process mapped it.
pub(crate) fn unlink(name: &str) {
    let cname = std::ffi::CString::new(name).expect("no NUL in segment names");
    // SAFETY: a valid C string.
    unsafe { libc::shm_unlink(cname.as_ptr()) };
}
