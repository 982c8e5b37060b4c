//! One rank's handle on an open file: opening and closing (collective), the
//! file's size, atomicity and view, and its accesses, planned (where, and
//! which file pointer moves) then performed (independently, or in a
//! collective round of the process's ranks).

use std::path::Path;
use std::sync::{Arc, Mutex};

use mpcrs::{Communicator, Error, ErrorClass, ErrorHandler, Op, Result};

pub use crate::collective::Direction;
use crate::collective::{bytes_read, Piece};
use crate::opened::{self, Opened};
use crate::shared_pointer::SharedPointer;
use crate::sys;
use crate::view::{Layout, View};

/// Access modes (MPI_MODE_*, MPICH's values).
pub mod amode {
    pub const CREATE: i32 = 1;
    pub const RDONLY: i32 = 2;
    pub const WRONLY: i32 = 4;
    pub const RDWR: i32 = 8;
    pub const DELETE_ON_CLOSE: i32 = 16;
    pub const UNIQUE_OPEN: i32 = 32;
    pub const EXCL: i32 = 64;
    pub const APPEND: i32 = 128;
    pub const SEQUENTIAL: i32 = 256;
    pub(crate) const ALL: i32 = 511;
}

/// MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END.
pub mod whence {
    pub const SET: i32 = 600;
    pub const CUR: i32 = 602;
    pub const END: i32 = 604;
}

/// Which position an access starts at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// An explicit offset, in etypes of the view (the *_at calls).
    At(i64),
    /// The rank's individual file pointer.
    Individual,
    /// The shared file pointer, in no particular order between ranks.
    Shared,
    /// The shared file pointer, in rank order (the *_ordered calls; collective).
    Ordered,
}

/// An access planned at its call: where its bytes lie in the file, with the
/// file pointer it moves already moved. Performing it may come later (a
/// non-blocking call), in the order planned.
#[derive(Debug)]
pub struct Plan {
    dir: Direction,
    extents: Vec<(u64, u64)>,
    len: u64,
    /// The collective round it takes part in, if collective.
    round: Option<u64>,
}

impl Plan {
    /// Bytes asked for.
    pub fn len(&self) -> u64 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

struct State {
    /// Shared with the accesses planned under it (a view is set rarely,
    /// read by every access).
    view: Arc<View>,
    /// The individual file pointer, in etypes.
    pointer: u64,
    atomic: bool,
    /// This rank's collective accesses so far: the next one's round.
    rounds: u64,
}

/// One rank's handle on an open file.
pub struct File {
    /// A duplicate of the opening communicator: the file's collectives and group.
    comm: Arc<Communicator>,
    opened: Arc<Opened>,
    amode: i32,
    shared: Option<SharedPointer>,
    state: Mutex<State>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "File({}, rank {})",
            self.opened.path.display(),
            self.comm.rank()
        )
    }
}

/// ROMIO's file-system prefixes ("ufs:name"): the name is what follows.
fn strip_prefix(path: &str) -> &str {
    for p in ["ufs:", "nfs:", "lustre:", "gpfs:", "testfs:"] {
        if let Some(rest) = path.strip_prefix(p) {
            return rest;
        }
    }
    path
}

/// Checks an access mode (MPI-3.1 13.2.1): the flags for open(2) or why not.
fn open_flags(mode: i32) -> std::result::Result<i32, String> {
    if mode & !amode::ALL != 0 {
        return Err(format!(
            "access mode {mode:#x} has bits MPI does not define"
        ));
    }
    let access = [amode::RDONLY, amode::WRONLY, amode::RDWR]
        .iter()
        .filter(|&&m| mode & m != 0)
        .count();
    if access != 1 {
        return Err("the access mode must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR".into());
    }
    if mode & amode::RDONLY != 0 && mode & (amode::CREATE | amode::EXCL) != 0 {
        return Err("MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL".into());
    }
    if mode & amode::RDWR != 0 && mode & amode::SEQUENTIAL != 0 {
        return Err("MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL".into());
    }
    Ok(if mode & amode::RDONLY != 0 {
        libc::O_RDONLY
    } else if mode & amode::WRONLY != 0 {
        libc::O_WRONLY
    } else {
        libc::O_RDWR
    })
}

/// MPI_File_delete.
pub fn delete(call: &'static str, path: &str, world_rank: i32) -> Result<()> {
    let path = strip_prefix(path);
    let c = std::ffi::CString::new(path).map_err(|_| {
        Error::new(
            ErrorClass::BadFile,
            call,
            world_rank,
            format!("file name {path:?} holds a NUL byte"),
        )
    })?;
    // SAFETY: unlink with a NUL-terminated path.
    if unsafe { libc::unlink(c.as_ptr()) } != 0 {
        let (class, detail) = sys::last_error(path);
        return Err(Error::new(class, call, world_rank, detail));
    }
    Ok(())
}

impl File {
    fn err(&self, call: &'static str, (class, detail): (ErrorClass, String)) -> Error {
        Error::new(class, call, self.comm.world_rank(), detail)
    }

    /// Every rank's outcome of a collective step: the first failure (by
    /// class) is every rank's error; a rank that failed keeps its own.
    fn agree(
        &self,
        call: &'static str,
        mine: std::result::Result<(), (ErrorClass, String)>,
    ) -> Result<()> {
        agree(&self.comm, call, mine)
    }

    /// MPI_File_open (collective over `comm`): rank 0 creates the file if
    /// asked to, then the other processes open it; each process holds one
    /// descriptor for its ranks.
    pub fn open(comm: &Communicator, call: &'static str, path: &str, mode: i32) -> Result<File> {
        let me = comm.world_rank();
        if comm.is_inter() {
            return Err(Error::new(
                ErrorClass::Comm,
                call,
                me,
                "files are opened by intracommunicators",
            ));
        }
        let path = strip_prefix(path);
        let flags = open_flags(mode).map_err(|d| Error::new(ErrorClass::Amode, call, me, d))?;
        let fcomm = Arc::new(comm.dup()?);
        fcomm.set_error_handler(ErrorHandler::Return);
        let n = fcomm.size() as usize;
        let here = (0..n).filter(|&r| fcomm.in_this_process(r)).count();
        let ctx = fcomm.context_id();
        let create = if mode & amode::CREATE != 0 {
            libc::O_CREAT
        } else {
            0
        };
        let excl = if mode & amode::EXCL != 0 {
            libc::O_EXCL
        } else {
            0
        };
        // Rank 0 first: it creates; the others open what exists.
        let mut first: std::result::Result<Option<Arc<Opened>>, (ErrorClass, String)> = Ok(None);
        let mut code = [0i32];
        if fcomm.rank() == 0 {
            first = opened::join(ctx, path, flags | create | excl, here).map(Some);
            if let Err((class, _)) = &first {
                code[0] = *class as i32;
            }
        }
        fcomm.broadcast(&mut code, 0)?;
        if code[0] != 0 {
            let detail = match first {
                Err((_, d)) => d,
                Ok(_) => format!("rank 0 of the communicator could not open {path}"),
            };
            return Err(Error::new(class_from(code[0]), call, me, detail));
        }
        let mine = match first {
            Ok(Some(o)) => Ok(o),
            _ => opened::join(ctx, path, flags, here),
        };
        // Every rank's outcome, and the modes every rank passed.
        let failed = mine.as_ref().err().map_or(0, |e| e.0 as i64);
        let mut seen = [0i64; 3];
        fcomm.all_reduce(&[failed, mode as i64, -(mode as i64)], &mut seen, &Op::Max)?;
        if seen[1] != -seen[2] {
            return Err(Error::new(
                ErrorClass::Amode,
                call,
                me,
                "the ranks passed different access modes",
            ));
        }
        if seen[0] != 0 {
            let (class, detail) = match mine {
                Err(e) => e,
                Ok(_) => (
                    class_from(seen[0] as i32),
                    format!("another rank could not open {path}"),
                ),
            };
            return Err(Error::new(class, call, me, detail));
        }
        let opened = mine.expect("checked above");
        let start = if mode & amode::APPEND != 0 {
            sys::size_of(opened.fd).map_err(|(c, d)| Error::new(c, call, me, d))?
        } else {
            0
        };
        let shared = SharedPointer::create(&fcomm, start)?;
        Ok(File {
            comm: fcomm,
            opened,
            amode: mode,
            shared: Some(shared),
            state: Mutex::new(State {
                view: Arc::new(View::default()),
                pointer: start,
                atomic: false,
                rounds: 0,
            }),
        })
    }

    /// MPI_File_close (collective). A file opened with
    /// MPI_MODE_DELETE_ON_CLOSE is deleted once every rank closed it.
    pub fn close(mut self, call: &'static str) -> Result<()> {
        if let Some(s) = self.shared.take() {
            // Collective: every rank is done with the file past this point.
            s.free()?;
        }
        if self.amode & amode::DELETE_ON_CLOSE != 0 && self.comm.rank() == 0 {
            let p = self.opened.path.to_string_lossy().into_owned();
            delete(call, &p, self.comm.world_rank())?;
        }
        Ok(())
    }

    pub fn communicator(&self) -> &Communicator {
        &self.comm
    }

    /// The file's communicator, counted (for what outlives a call).
    pub fn communicator_arc(&self) -> Arc<Communicator> {
        self.comm.clone()
    }

    pub fn amode(&self) -> i32 {
        self.amode
    }

    pub fn path(&self) -> &Path {
        &self.opened.path
    }

    /// MPI_File_get_size.
    pub fn size(&self, call: &'static str) -> Result<u64> {
        sys::size_of(self.opened.fd).map_err(|e| self.err(call, e))
    }

    /// The checks of a call that resizes the file (collective): a size every
    /// rank passed alike, on a file open for writing. Every rank is here
    /// after it: none still accesses the file.
    fn resize_checked(&self, call: &'static str, size: i64) -> Result<()> {
        if size < 0 {
            return Err(self.err(call, (ErrorClass::Arg, format!("negative size {size}"))));
        }
        if self.amode & amode::RDONLY != 0 {
            return Err(self.err(
                call,
                (
                    ErrorClass::ReadOnly,
                    "the file is open MPI_MODE_RDONLY".into(),
                ),
            ));
        }
        self.same(call, size)
    }

    /// MPI_File_set_size (collective): truncates or extends.
    pub fn set_size(&self, call: &'static str, size: i64) -> Result<()> {
        self.resize_checked(call, size)?;
        let mut mine = Ok(());
        if self.comm.rank() == 0 {
            // SAFETY: ftruncate on the opening's descriptor.
            if unsafe { libc::ftruncate(self.opened.fd, size) } != 0 {
                mine = Err(sys::last_error(&format!(
                    "setting the size of {} to {size}",
                    self.path().display()
                )));
            }
        }
        self.agree(call, mine)
    }

    /// MPI_File_preallocate (collective): at least `size` bytes, never fewer
    /// than there are.
    pub fn preallocate(&self, call: &'static str, size: i64) -> Result<()> {
        self.resize_checked(call, size)?;
        let mut mine = Ok(());
        if self.comm.rank() == 0 && size > 0 {
            // SAFETY: posix_fallocate on the opening's descriptor.
            let e = unsafe { libc::posix_fallocate(self.opened.fd, 0, size) };
            if e != 0 {
                mine = Err((
                    sys::class_of(e),
                    format!(
                        "preallocating {size} bytes of {}: {}",
                        self.path().display(),
                        std::io::Error::from_raw_os_error(e)
                    ),
                ));
            }
        }
        self.agree(call, mine)
    }

    /// Checks that every rank passed the same `v` (collective).
    fn same(&self, call: &'static str, v: i64) -> Result<()> {
        let mut both = [v, -v];
        self.comm.all_reduce_in_place(&mut both, &Op::Max)?;
        if both[0] != -both[1] {
            return Err(self.err(
                call,
                (
                    ErrorClass::NotSame,
                    "the ranks passed different sizes".into(),
                ),
            ));
        }
        Ok(())
    }

    /// MPI_File_sync (collective): what this process wrote reaches storage.
    pub fn sync(&self, call: &'static str) -> Result<()> {
        if self.amode & amode::RDONLY != 0 {
            return Err(self.err(
                call,
                (
                    ErrorClass::Access,
                    "MPI_File_sync on a file open MPI_MODE_RDONLY".into(),
                ),
            ));
        }
        let fd = self.opened.fd;
        // SAFETY: fsync on the opening's descriptor.
        let mine = if unsafe { libc::fsync(fd) } != 0 {
            Err(sys::last_error("fsync"))
        } else {
            Ok(())
        };
        self.agree(call, mine)
    }

    /// MPI_File_set_atomicity (collective).
    pub fn set_atomicity(&self, call: &'static str, atomic: bool) -> Result<()> {
        let mut v = [atomic as i32, -(atomic as i32)];
        self.comm.all_reduce_in_place(&mut v, &Op::Max)?;
        if v[0] != -v[1] {
            return Err(self.err(
                call,
                (
                    ErrorClass::NotSame,
                    "the ranks asked for different atomicity".into(),
                ),
            ));
        }
        self.state.lock().unwrap().atomic = atomic;
        Ok(())
    }

    pub fn atomicity(&self) -> bool {
        self.state.lock().unwrap().atomic
    }

    /// MPI_File_set_view (collective): both file pointers go back to 0.
    /// `disp` None is MPI_DISPLACEMENT_CURRENT (sequential files only).
    pub fn set_view(
        &self,
        call: &'static str,
        disp: Option<i64>,
        etype: &Layout,
        filetype: Layout,
        datarep: &str,
    ) -> Result<()> {
        let check = (|| {
            match datarep {
                // The bytes are the caller's: it converts external32 ones.
                "native" | "internal" | "external32" => {}
                other => return Err((ErrorClass::UnsupportedDatarep, format!("no data representation named {other:?} (\"native\", \"internal\" and \"external32\" are)"))),
            }
            let disp = match disp {
                Some(d) if d < 0 => {
                    return Err((ErrorClass::Arg, format!("negative displacement {d}")))
                }
                Some(d) => d as u64,
                None if self.amode & amode::SEQUENTIAL == 0 => {
                    return Err((
                        ErrorClass::Arg,
                        "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL".into(),
                    ))
                }
                None => u64::MAX,
            };
            Ok((
                disp,
                View::new(0, etype, filetype, self.amode & amode::RDONLY != 0)?,
            ))
        })();
        let (disp, view) = match check {
            Ok(v) => v,
            Err(e) => return Err(self.err(call, e)),
        };
        let disp = if disp == u64::MAX {
            // The shared pointer's place, as bytes of the current view.
            let st_view = self.state.lock().unwrap().view.clone();
            let at = self.shared()?.fetch_add(0)?;
            st_view.byte_of(at * st_view.etype_size)
        } else {
            disp
        };
        // Every access under the old view is done before the pointer moves.
        mpcrs::raw::barrier(&self.comm);
        if self.comm.rank() == 0 {
            self.shared()?.set(0)?;
        }
        {
            let mut st = self.state.lock().unwrap();
            st.view = Arc::new(View { disp, ..view });
            st.pointer = 0;
        }
        mpcrs::raw::barrier(&self.comm);
        Ok(())
    }

    pub fn view(&self) -> Arc<View> {
        self.state.lock().unwrap().view.clone()
    }

    fn shared(&self) -> Result<&SharedPointer> {
        Ok(self.shared.as_ref().expect("open until closed"))
    }

    /// MPI_File_seek.
    pub fn seek(&self, call: &'static str, offset: i64, whence: i32) -> Result<()> {
        self.sequential_refused(call)?;
        let end = self.end_in_etypes(call)?;
        let mut st = self.state.lock().unwrap();
        let to = match whence {
            whence::SET => offset,
            whence::CUR => st.pointer as i64 + offset,
            whence::END => end as i64 + offset,
            w => return Err(self.err(call, (ErrorClass::Arg, format!("invalid whence {w}")))),
        };
        if to < 0 {
            return Err(self.err(
                call,
                (
                    ErrorClass::Arg,
                    format!("the pointer would move to offset {to}, before the view's start"),
                ),
            ));
        }
        st.pointer = to as u64;
        Ok(())
    }

    /// MPI_File_get_position, in etypes.
    pub fn position(&self) -> u64 {
        self.state.lock().unwrap().pointer
    }

    /// MPI_File_seek_shared (collective; every rank passes the same).
    pub fn seek_shared(&self, call: &'static str, offset: i64, whence: i32) -> Result<()> {
        let mut v = [offset, whence as i64, -offset, -(whence as i64)];
        self.comm.all_reduce_in_place(&mut v, &Op::Max)?;
        if v[0] != -v[2] || v[1] != -v[3] {
            return Err(self.err(
                call,
                (
                    ErrorClass::NotSame,
                    "the ranks passed different offsets or whence".into(),
                ),
            ));
        }
        let end = self.end_in_etypes(call)?;
        mpcrs::raw::barrier(&self.comm);
        let mut mine = Ok(());
        if self.comm.rank() == 0 {
            let now = self.shared()?.fetch_add(0)? as i64;
            let to = match whence {
                whence::SET => offset,
                whence::CUR => now + offset,
                whence::END => end as i64 + offset,
                w => -1 - (w as i64).abs(),
            };
            if to < 0 {
                mine = Err((ErrorClass::Arg, format!("invalid whence {whence} or offset {offset}: the shared pointer would move before the view's start")));
            } else {
                self.shared()?.set(to as u64)?;
            }
        }
        self.agree(call, mine)
    }

    /// MPI_File_get_position_shared, in etypes.
    pub fn position_shared(&self, _call: &'static str) -> Result<u64> {
        self.shared()?.fetch_add(0)
    }

    /// MPI_File_get_byte_offset.
    pub fn byte_offset(&self, call: &'static str, offset: i64) -> Result<u64> {
        if offset < 0 {
            return Err(self.err(call, (ErrorClass::Arg, format!("negative offset {offset}"))));
        }
        let v = self.view();
        Ok(v.byte_of(offset as u64 * v.etype_size))
    }

    /// The end of the file in etypes of the view (MPI_SEEK_END).
    fn end_in_etypes(&self, call: &'static str) -> Result<u64> {
        let size = self.size(call)?;
        let v = self.view();
        Ok(v.data_before(size).div_ceil(v.etype_size.max(1)))
    }

    fn sequential_refused(&self, call: &'static str) -> Result<()> {
        if self.amode & amode::SEQUENTIAL != 0 {
            return Err(self.err(
                call,
                (
                    ErrorClass::UnsupportedOperation,
                    "a file opened MPI_MODE_SEQUENTIAL has only the shared file pointer".into(),
                ),
            ));
        }
        Ok(())
    }

    /// Plans an access of `len` bytes at `pos`, moving the file pointer it
    /// uses; `collective` for the *_all and *_ordered calls (every rank of
    /// the file calls them alike, in the same order).
    pub fn plan(
        &self,
        call: &'static str,
        pos: Position,
        dir: Direction,
        len: u64,
        collective: bool,
    ) -> Result<Plan> {
        match dir {
            Direction::Read if self.amode & amode::WRONLY != 0 => {
                return Err(self.err(
                    call,
                    (
                        ErrorClass::Access,
                        "reading a file opened MPI_MODE_WRONLY".into(),
                    ),
                ));
            }
            Direction::Write if self.amode & amode::RDONLY != 0 => {
                return Err(self.err(
                    call,
                    (
                        ErrorClass::ReadOnly,
                        "writing a file opened MPI_MODE_RDONLY".into(),
                    ),
                ));
            }
            _ => {}
        }
        if matches!(pos, Position::At(_) | Position::Individual) {
            self.sequential_refused(call)?;
        }
        let view = self.view();
        let n = view.etypes(len).map_err(|e| self.err(call, e))?;
        let start = match pos {
            Position::At(o) if o < 0 => {
                return Err(self.err(call, (ErrorClass::Arg, format!("negative offset {o}"))));
            }
            Position::At(o) => o as u64,
            Position::Individual => {
                let mut st = self.state.lock().unwrap();
                let at = st.pointer;
                st.pointer += n;
                at
            }
            Position::Shared => self.shared()?.fetch_add(n)?,
            Position::Ordered => {
                // Rank order: each rank's place after the ranks before it;
                // the last rank moves the pointer past them all.
                let mut end = [0u64];
                self.comm.scan(&[n], &mut end, &Op::Sum)?;
                let last = self.comm.size() - 1;
                let mut base = [0u64];
                if self.comm.rank() == last {
                    base[0] = self.shared()?.fetch_add(end[0])?;
                }
                self.comm.broadcast(&mut base, last)?;
                base[0] + end[0] - n
            }
        };
        let round = collective.then(|| {
            let mut st = self.state.lock().unwrap();
            st.rounds += 1;
            st.rounds - 1
        });
        Ok(Plan {
            dir,
            extents: view.extents(start * view.etype_size, len),
            len,
            round,
        })
    }

    /// Performs a planned access on `buf` (the packed bytes of the data);
    /// returns the bytes moved (fewer than planned for a read past the end).
    ///
    /// # Safety
    /// `buf` valid for the plan's bytes, untouched by others until return.
    pub unsafe fn perform(&self, call: &'static str, plan: &Plan, buf: *mut u8) -> Result<u64> {
        let mut pieces = Vec::with_capacity(plan.extents.len());
        let mut off = 0u64;
        for &(at, len) in &plan.extents {
            pieces.push(Piece {
                at,
                len,
                buf: buf as usize + off as usize,
            });
            off += len;
        }
        let atomic = self.atomicity().then_some(&self.opened.atomic);
        let outcome = match plan.round {
            Some(r) => self
                .opened
                .rounds
                .take_part(r, &pieces, plan.dir, self.opened.fd, atomic),
            None => crate::collective::alone(&pieces, plan.dir, self.opened.fd, atomic),
        };
        outcome.result.map_err(|e| self.err(call, e))?;
        Ok(match plan.dir {
            Direction::Write => plan.len,
            Direction::Read => bytes_read(&pieces, outcome.end),
        })
    }
}

/// MPI's error class numbered `c`, as the runtime names it.
fn class_from(c: i32) -> ErrorClass {
    ErrorClass::from_code(c).unwrap_or(ErrorClass::Io)
}

/// Every rank's outcome of a collective step (see [`File::agree`]).
fn agree(
    comm: &Communicator,
    call: &'static str,
    mine: std::result::Result<(), (ErrorClass, String)>,
) -> Result<()> {
    let code = mine.as_ref().err().map_or(0, |e| e.0 as i32);
    let mut worst = [0i32];
    comm.all_reduce(&[code], &mut worst, &Op::Max)?;
    match mine {
        Err((class, detail)) => Err(Error::new(class, call, comm.world_rank(), detail)),
        Ok(()) if worst[0] != 0 => Err(Error::new(
            class_from(worst[0]),
            call,
            comm.world_rank(),
            "failed on another rank of the file",
        )),
        Ok(()) => Ok(()),
    }
}
