//! The shm driver's building blocks: a single-producer single-consumer ring of
//! frames in a POSIX shared-memory object (eager messages between processes of
//! one node), and cross-memory attach (process_vm_readv) for the one copy of a
//! large message straight out of the sender's memory.
//!
//! A frame is an 8-byte word (a mark, the frame's position, its length) followed
//! by its bytes, starting on a cache line. The producer writes the bytes, then
//! publishes the word: the consumer polls the word at its position, so a small
//! frame crosses between the cores in the one cache line it occupies, with no
//! separate tail index to move. Where a frame may start, the producer has cleared
//! the word beforehand (a stretch of lines at a time, ahead of its position), so
//! bytes an earlier lap left there never pass for a frame. The consumer publishes
//! how far it has read (`head`), which the producer reads only when the ring
//! looks full to it.

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use mpcrs_scheduler::bell::Doorbell;

/// Bytes before the data area: the consumer's position on its own cache line,
/// then the consumer's doorbell on the next (see [`ShmRing::doorbell`]).
const HEADER: usize = 128;
/// Where the consumer's doorbell lies in the header.
const DOORBELL_AT: usize = 64;
/// Frames start on a cache line.
const ALIGN: u64 = 64;
/// How far ahead of its position the producer clears the words of frames to come.
const CLEAR_AHEAD: u64 = 4096;
/// Bytes of the word in front of every frame.
const WORD: u64 = 8;
/// Set in every published word: a cleared word (zero) is never a frame.
const MARK: u64 = 1 << 63;

/// A shared mapping of a shared-memory object, unmapped when dropped: the
/// memory of a ring, or of a node area of the collectives.
pub struct SharedMapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: owning a mapping is not tied to a thread; how its bytes are shared
// is up to the protocol of its owner (a ring, a node area).
unsafe impl Send for SharedMapping {}
// SAFETY: as above: this type gives out the address only.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// The first byte of the mapping, page-aligned.
    #[inline]
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping of `len` bytes; its owner is gone.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// One direction of a shared-memory channel. Its memory is reached through
/// atomics (frame words, head) and through byte ranges that the single-producer
/// single-consumer protocol gives to one side at a time: `push` must be called
/// by one producer and `pop` by one consumer, which the driver guarantees by
/// owning each ring on one side.
pub struct ShmRing {
    map: SharedMapping,
    cap: u64,
    name: String,
    /// The producer's position (only the producer uses it).
    tail: AtomicU64,
    /// The producer's view of `head`, read again only when the ring looks full.
    head_seen: AtomicU64,
    /// The producer's clearing: the word of every line from `tail` up to here
    /// is zero (a fresh ring is all zero).
    cleared: AtomicU64,
}

/// The word published in front of a frame of `len` bytes at position `pos`: the
/// position makes a word left from an earlier lap (or any stale bytes) never
/// pass for the frame expected there.
fn frame_word(pos: u64, len: usize) -> u64 {
    MARK | (((pos / WORD) & 0x7fff_ffff) << 32) | len as u64
}

fn shm_name(name: &str) -> io::Result<CString> {
    CString::new(format!("/{}", name.trim_start_matches('/'))).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "shared-memory name with a NUL byte",
        )
    })
}

/// Maps `len` bytes of the object behind `fd`, shared, and closes `fd`. The
/// pages are mapped in now (MAP_POPULATE): otherwise the first lap of a ring
/// takes a page fault every 64 small frames, on both sides.
fn map_fd(fd: libc::c_int, len: usize) -> io::Result<SharedMapping> {
    // SAFETY: mapping `len` bytes of the object behind `fd`, shared.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_POPULATE,
            fd,
            0,
        )
    };
    // SAFETY: the mapping keeps the object alive; the fd is no longer needed.
    unsafe { libc::close(fd) };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(SharedMapping { ptr: p.cast(), len })
}

/// Maps the POSIX shared-memory object `name`, creating it if need be, sized to
/// `len` bytes, shared. Every process that opens one object gives the same
/// length: resizing to the same length keeps the contents, so who comes first
/// does not matter. A new object reads zero.
pub fn map_shared(name: &str, len: usize) -> io::Result<SharedMapping> {
    let cname = shm_name(name)?;
    // SAFETY: shm_open with a valid name; the fd is closed by `map_fd` or below.
    let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_CREAT | libc::O_RDWR, 0o600) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: sizing our descriptor's object.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        let e = io::Error::last_os_error();
        // SAFETY: closing our fd.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    map_fd(fd, len)
}

/// Removes the name of a shared-memory object; its mappings stay valid.
pub fn unlink_shared(name: &str) -> io::Result<()> {
    let cname = shm_name(name)?;
    // SAFETY: unlinking a name; no memory is touched.
    if unsafe { libc::shm_unlink(cname.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl ShmRing {
    /// Creates the ring `name` with `capacity` bytes of data (a power of two).
    pub fn create(name: &str, capacity: usize) -> io::Result<ShmRing> {
        assert!(
            capacity.is_power_of_two() && capacity >= 64,
            "ring capacity must be a power of two"
        );
        let cname = shm_name(name)?;
        // SAFETY: shm_open with a valid name; the fd is closed below.
        let fd = unsafe {
            libc::shm_open(
                cname.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                0o600,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let len = HEADER + capacity;
        // SAFETY: sizing the object we just created.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: cleaning up our own object.
            unsafe {
                libc::close(fd);
                libc::shm_unlink(cname.as_ptr());
            }
            return Err(e);
        }
        Self::map(fd, len, name)
    }

    /// Opens the ring `name` created by the other side.
    pub fn open(name: &str) -> io::Result<ShmRing> {
        let cname = shm_name(name)?;
        // SAFETY: shm_open with a valid name.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a zeroed stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat on our fd.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our fd.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Self::map(fd, st.st_size as usize, name)
    }

    fn map(fd: libc::c_int, len: usize, name: &str) -> io::Result<ShmRing> {
        let map = map_fd(fd, len)?;
        let cap = len.saturating_sub(HEADER) as u64;
        if !cap.is_power_of_two() {
            // The mapping goes with `map`.
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("shared-memory ring {name} has a bad size ({len} bytes)"),
            ));
        }
        Ok(ShmRing {
            map,
            cap,
            name: name.to_string(),
            tail: AtomicU64::new(0),
            head_seen: AtomicU64::new(0),
            cleared: AtomicU64::new(cap),
        })
    }

    /// Removes the name; mappings stay valid. Call once both sides have opened it.
    pub fn unlink(&self) -> io::Result<()> {
        unlink_shared(&self.name)
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: the header's first 8 bytes, 8-aligned (page-aligned mapping).
        unsafe { &*(self.map.as_ptr() as *const AtomicU64) }
    }

    /// The consumer's doorbell (see [`mpcrs_scheduler::bell`]): a worker
    /// about to sleep arms it and looks for frames once more; the producer
    /// rings it after each frame if anyone sleeps.
    pub fn doorbell(&self) -> &Doorbell {
        // SAFETY: 8 bytes of the header, 4-aligned (page-aligned mapping),
        // zeroed when the ring was created (a quiet doorbell).
        unsafe { &*(self.map.as_ptr().add(DOORBELL_AT) as *const Doorbell) }
    }

    /// The frame word at position `pos` (line-aligned; never split by the wrap,
    /// the capacity being a power of two of at least 64).
    fn word(&self, pos: u64) -> &AtomicU64 {
        let at = (pos & (self.cap - 1)) as usize;
        // SAFETY: `at` is 8-aligned and at least 8 bytes before the end of the
        // data area, which starts page-aligned + HEADER.
        unsafe { &*(self.map.as_ptr().add(HEADER + at) as *const AtomicU64) }
    }

    /// Copies `src` into the data area at position `pos`, wrapping around.
    fn write_at(&self, pos: u64, src: &[u8]) {
        let at = (pos & (self.cap - 1)) as usize;
        let first = src.len().min(self.cap as usize - at);
        // SAFETY: both ranges lie in the data area, which this side owns between
        // the positions it has not yet published.
        unsafe {
            let data = self.map.as_ptr().add(HEADER);
            std::ptr::copy_nonoverlapping(src.as_ptr(), data.add(at), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), data, src.len() - first);
        }
    }

    /// Copies `len` bytes from position `pos`, wrapping around, to `dst`.
    ///
    /// # Safety
    /// `dst` valid for writing `len` bytes.
    unsafe fn read_at(&self, pos: u64, dst: *mut u8, len: usize) {
        let at = (pos & (self.cap - 1)) as usize;
        let first = len.min(self.cap as usize - at);
        // SAFETY: as `write_at`, for bytes the producer has published; `dst` by
        // contract.
        unsafe {
            let data = self.map.as_ptr().add(HEADER);
            std::ptr::copy_nonoverlapping(data.add(at), dst, first);
            std::ptr::copy_nonoverlapping(data, dst.add(first), len - first);
        }
    }

    /// The largest frame the ring can ever take.
    pub fn max_frame(&self) -> usize {
        // A word in front, and the cleared line of the next frame behind.
        (self.cap - 2 * ALIGN) as usize
    }

    /// Appends a frame (producer side); false if there is no room now.
    pub fn push(&self, frame: &[u8]) -> bool {
        self.push_parts(&[frame])
    }

    /// [`ShmRing::push`] of the frame made of `parts` one after the other.
    pub fn push_parts(&self, parts: &[&[u8]]) -> bool {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        assert!(len <= self.max_frame(), "frame larger than the ring");
        let need = (WORD + len as u64).next_multiple_of(ALIGN);
        let tail = self.tail.load(Ordering::Relaxed);
        // Room for the frame and for the line of the next one, whose word must
        // read zero once this frame is published.
        let fits = |head: u64| self.cap - (tail - head) >= need + ALIGN;
        let mut head = self.head_seen.load(Ordering::Relaxed);
        if !fits(head) {
            head = self.head().load(Ordering::Acquire);
            self.head_seen.store(head, Ordering::Relaxed);
            if !fits(head) {
                return false;
            }
        }
        let cleared = self.cleared.load(Ordering::Relaxed);
        if cleared < tail + need + ALIGN {
            // Only lines the consumer is done with: up to `head` one lap on.
            let upto = (tail + need + CLEAR_AHEAD).min(head + self.cap);
            for pos in (cleared.max(tail)..upto).step_by(ALIGN as usize) {
                self.word(pos).store(0, Ordering::Relaxed);
            }
            self.cleared.store(upto, Ordering::Relaxed);
        }
        let mut at = tail + WORD;
        for p in parts {
            self.write_at(at, p);
            at += p.len() as u64;
        }
        // Published after the clearing: the consumer, seeing this word, sees the
        // next frame's word cleared too.
        self.word(tail)
            .store(frame_word(tail, len), Ordering::Release);
        self.tail.store(tail + need, Ordering::Relaxed);
        self.doorbell().ring_if_sleeping();
        true
    }

    /// Whether a frame waits at the consumer's position. Read-only: any thread
    /// may ask while the consumer pops (the answer may then be stale).
    pub fn has_frame(&self) -> bool {
        let head = self.head().load(Ordering::Relaxed);
        self.word(head).load(Ordering::Acquire) & MARK != 0
    }

    /// Takes the oldest frame (consumer side).
    pub fn pop(&self) -> Option<Vec<u8>> {
        self.pop_with(|f| f.to_vec())
    }

    /// Takes the oldest frame and hands it to `f` where it lies in the ring
    /// (copied out first only if it wraps around the ring's end); its space
    /// goes back to the producer once `f` returns.
    pub fn pop_with<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let head = self.head().load(Ordering::Relaxed);
        let word = self.word(head).load(Ordering::Acquire);
        if word & MARK == 0 {
            return None;
        }
        let len = (word & 0xffff_ffff) as usize;
        assert_eq!(
            word,
            frame_word(head, len),
            "shm ring {}: frame word at position {head} is not the producer's",
            self.name
        );
        let at = ((head + WORD) & (self.cap - 1)) as usize;
        let r = if at + len <= self.cap as usize {
            // SAFETY: published bytes of the data area, which the producer does
            // not touch again before `head` moves past them (below, after `f`).
            f(unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(HEADER + at), len) })
        } else {
            let mut frame = Vec::with_capacity(len);
            // SAFETY: the capacity holds `len` bytes, all written before `set_len`.
            unsafe {
                self.read_at(head + WORD, frame.as_mut_ptr(), len);
                frame.set_len(len);
            }
            f(&frame)
        };
        self.head().store(
            head + (WORD + len as u64).next_multiple_of(ALIGN),
            Ordering::Release,
        );
        Some(r)
    }
}

/// Copies `dst.len()` bytes at `remote` in process `pid` into `dst`, in one copy
/// by the kernel (cross-memory attach; same user, no ptrace restriction needed
/// beyond the defaults).
pub fn read_remote(pid: i32, remote: usize, dst: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < dst.len() {
        let local = libc::iovec {
            iov_base: dst[done..].as_mut_ptr().cast(),
            iov_len: dst.len() - done,
        };
        let remote_iov = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: dst.len() - done,
        };
        // SAFETY: `local` covers our own buffer; the kernel checks the remote range.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote_iov, 1, 0) };
        if n <= 0 {
            return Err(if n == 0 {
                io::Error::new(io::ErrorKind::UnexpectedEof, "no bytes read")
            } else {
                io::Error::last_os_error()
            });
        }
        done += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(i: usize) -> Vec<u8> {
        (0..(i * 131) % 3000).map(|j| (i * 7 + j) as u8).collect()
    }

    #[test]
    fn frames_cross_two_mappings_in_order_with_wraparound() {
        let name = format!("mpcrs-test-ring-{}", std::process::id());
        let producer = ShmRing::create(&name, 4096).unwrap();
        let consumer = ShmRing::open(&name).unwrap();
        producer.unlink().unwrap();
        let n = 20_000;
        let t = std::thread::spawn(move || {
            for i in 0..n {
                let f = frame(i);
                while !producer.push(&f) {
                    std::hint::spin_loop();
                }
            }
        });
        for i in 0..n {
            let got = loop {
                if let Some(f) = consumer.pop() {
                    break f;
                }
                std::hint::spin_loop();
            };
            assert_eq!(got, frame(i), "frame {i}");
        }
        t.join().unwrap();
        assert!(consumer.pop().is_none());
    }

    #[test]
    fn bytes_left_by_an_earlier_lap_never_pass_for_a_frame() {
        let name = format!("mpcrs-test-ring-stale-{}", std::process::id());
        let cap = 4096u64;
        let producer = ShmRing::create(&name, cap as usize).unwrap();
        let consumer = ShmRing::open(&name).unwrap();
        producer.unlink().unwrap();
        // Each payload word holds exactly the word a frame at the same place one
        // lap later would have.
        let mut pos = 0u64;
        while pos < 2 * cap {
            let payload: Vec<u8> = (0..30u64)
                .flat_map(|i| frame_word(pos + WORD + i * WORD + cap, 8).to_le_bytes())
                .collect();
            assert!(producer.push(&payload));
            assert_eq!(consumer.pop().as_deref(), Some(&payload[..]));
            pos += (WORD + payload.len() as u64).next_multiple_of(ALIGN);
            // Nothing was pushed since: whatever the ring holds where the next
            // frame goes is not a frame.
            assert!(consumer.pop().is_none(), "stale bytes taken at {pos}");
        }
        for i in 0..1000u64 {
            let small = i.to_le_bytes();
            assert!(producer.push(&small));
            assert_eq!(consumer.pop().as_deref(), Some(&small[..]));
            assert!(
                consumer.pop().is_none(),
                "stale bytes taken after frame {i}"
            );
        }
    }
}
