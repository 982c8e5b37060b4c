//! MPI error classes, the error value every call returns, and error handlers.

use std::fmt;

/// MPI error classes, with the values MPI-4 and MPICH give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum ErrorClass {
    Success = 0,
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Root = 7,
    Group = 8,
    Op = 9,
    Topology = 10,
    Dims = 11,
    Arg = 12,
    Unknown = 13,
    Truncate = 14,
    Other = 15,
    Intern = 16,
    InStatus = 17,
    Pending = 18,
    Request = 19,
    Access = 20,
    Amode = 21,
    BadFile = 22,
    Conversion = 23,
    DupDatarep = 24,
    FileExists = 25,
    FileInUse = 26,
    File = 27,
    Info = 28,
    InfoKey = 29,
    InfoValue = 30,
    InfoNokey = 31,
    Io = 32,
    Name = 33,
    NoMem = 34,
    NotSame = 35,
    NoSpace = 36,
    NoSuchFile = 37,
    Port = 38,
    Quota = 39,
    ReadOnly = 40,
    Service = 41,
    Spawn = 42,
    UnsupportedDatarep = 43,
    UnsupportedOperation = 44,
    Win = 45,
    Base = 46,
    Locktype = 47,
    Keyval = 48,
    RmaConflict = 49,
    RmaSync = 50,
    Size = 51,
    Disp = 52,
    Assert = 53,
    RmaRange = 55,
    RmaAttach = 56,
    RmaShared = 57,
    RmaFlavor = 58,
    Session = 75,
}

impl ErrorClass {
    /// The class whose MPI value is `code`, if it is one.
    pub fn from_code(code: i32) -> Option<ErrorClass> {
        use ErrorClass::*;
        const ALL: [ErrorClass; 59] = [
            Success,
            Buffer,
            Count,
            Type,
            Tag,
            Comm,
            Rank,
            Root,
            Group,
            Op,
            Topology,
            Dims,
            Arg,
            Unknown,
            Truncate,
            Other,
            Intern,
            InStatus,
            Pending,
            Request,
            Access,
            Amode,
            BadFile,
            Conversion,
            DupDatarep,
            FileExists,
            FileInUse,
            File,
            Info,
            InfoKey,
            InfoValue,
            InfoNokey,
            Io,
            Name,
            NoMem,
            NotSame,
            NoSpace,
            NoSuchFile,
            Port,
            Quota,
            ReadOnly,
            Service,
            Spawn,
            UnsupportedDatarep,
            UnsupportedOperation,
            Win,
            Base,
            Locktype,
            Keyval,
            RmaConflict,
            RmaSync,
            Size,
            Disp,
            Assert,
            RmaRange,
            RmaAttach,
            RmaShared,
            RmaFlavor,
            Session,
        ];
        ALL.into_iter().find(|c| *c as i32 == code)
    }

    /// The MPI constant's name, as users grep for it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Success => "MPI_SUCCESS",
            ErrorClass::Buffer => "MPI_ERR_BUFFER",
            ErrorClass::Count => "MPI_ERR_COUNT",
            ErrorClass::Type => "MPI_ERR_TYPE",
            ErrorClass::Tag => "MPI_ERR_TAG",
            ErrorClass::Comm => "MPI_ERR_COMM",
            ErrorClass::Rank => "MPI_ERR_RANK",
            ErrorClass::Root => "MPI_ERR_ROOT",
            ErrorClass::Group => "MPI_ERR_GROUP",
            ErrorClass::Op => "MPI_ERR_OP",
            ErrorClass::Topology => "MPI_ERR_TOPOLOGY",
            ErrorClass::Dims => "MPI_ERR_DIMS",
            ErrorClass::Arg => "MPI_ERR_ARG",
            ErrorClass::Unknown => "MPI_ERR_UNKNOWN",
            ErrorClass::Truncate => "MPI_ERR_TRUNCATE",
            ErrorClass::Other => "MPI_ERR_OTHER",
            ErrorClass::Intern => "MPI_ERR_INTERN",
            ErrorClass::InStatus => "MPI_ERR_IN_STATUS",
            ErrorClass::Pending => "MPI_ERR_PENDING",
            ErrorClass::Request => "MPI_ERR_REQUEST",
            ErrorClass::Access => "MPI_ERR_ACCESS",
            ErrorClass::Amode => "MPI_ERR_AMODE",
            ErrorClass::BadFile => "MPI_ERR_BAD_FILE",
            ErrorClass::Conversion => "MPI_ERR_CONVERSION",
            ErrorClass::DupDatarep => "MPI_ERR_DUP_DATAREP",
            ErrorClass::FileExists => "MPI_ERR_FILE_EXISTS",
            ErrorClass::FileInUse => "MPI_ERR_FILE_IN_USE",
            ErrorClass::File => "MPI_ERR_FILE",
            ErrorClass::Info => "MPI_ERR_INFO",
            ErrorClass::InfoKey => "MPI_ERR_INFO_KEY",
            ErrorClass::InfoValue => "MPI_ERR_INFO_VALUE",
            ErrorClass::InfoNokey => "MPI_ERR_INFO_NOKEY",
            ErrorClass::Io => "MPI_ERR_IO",
            ErrorClass::Name => "MPI_ERR_NAME",
            ErrorClass::NoMem => "MPI_ERR_NO_MEM",
            ErrorClass::NotSame => "MPI_ERR_NOT_SAME",
            ErrorClass::NoSpace => "MPI_ERR_NO_SPACE",
            ErrorClass::NoSuchFile => "MPI_ERR_NO_SUCH_FILE",
            ErrorClass::Port => "MPI_ERR_PORT",
            ErrorClass::Quota => "MPI_ERR_QUOTA",
            ErrorClass::ReadOnly => "MPI_ERR_READ_ONLY",
            ErrorClass::Service => "MPI_ERR_SERVICE",
            ErrorClass::Spawn => "MPI_ERR_SPAWN",
            ErrorClass::UnsupportedDatarep => "MPI_ERR_UNSUPPORTED_DATAREP",
            ErrorClass::UnsupportedOperation => "MPI_ERR_UNSUPPORTED_OPERATION",
            ErrorClass::Win => "MPI_ERR_WIN",
            ErrorClass::Base => "MPI_ERR_BASE",
            ErrorClass::Locktype => "MPI_ERR_LOCKTYPE",
            ErrorClass::Keyval => "MPI_ERR_KEYVAL",
            ErrorClass::RmaConflict => "MPI_ERR_RMA_CONFLICT",
            ErrorClass::RmaSync => "MPI_ERR_RMA_SYNC",
            ErrorClass::Size => "MPI_ERR_SIZE",
            ErrorClass::Disp => "MPI_ERR_DISP",
            ErrorClass::Assert => "MPI_ERR_ASSERT",
            ErrorClass::RmaRange => "MPI_ERR_RMA_RANGE",
            ErrorClass::RmaAttach => "MPI_ERR_RMA_ATTACH",
            ErrorClass::RmaShared => "MPI_ERR_RMA_SHARED",
            ErrorClass::RmaFlavor => "MPI_ERR_RMA_FLAVOR",
            ErrorClass::Session => "MPI_ERR_SESSION",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed MPI call: which call, on which rank, which class, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} on rank {rank}: {class}: {detail}")]
pub struct Error {
    pub class: ErrorClass,
    pub call: &'static str,
    /// Rank in MPI_COMM_WORLD of the caller.
    pub rank: i32,
    pub detail: String,
}

impl Error {
    pub fn new(
        class: ErrorClass,
        call: &'static str,
        rank: i32,
        detail: impl Into<String>,
    ) -> Error {
        Error {
            class,
            call,
            rank,
            detail: detail.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// What a communicator does with an error (MPI error handlers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorHandler {
    /// MPI_ERRORS_ARE_FATAL: print the call, rank and class, end the job.
    #[default]
    Fatal,
    /// MPI_ERRORS_RETURN: hand the error back to the caller.
    Return,
}

/// Exit status of a job ended by a fatal MPI error.
pub const FATAL_EXIT_CODE: i32 = 15;

/// Ends the job on a fatal error, naming the call, rank and class.
pub fn fatal(err: &Error) -> ! {
    mpcrs_settings::report!(
        error,
        "mpcrs: fatal error in {} on rank {}: {}: {}",
        err.call,
        err.rank,
        err.class,
        err.detail
    );
    crate::process::abort_job(FATAL_EXIT_CODE)
}

impl ErrorHandler {
    /// Applies the handler to a call's result.
    pub fn handle<T>(self, r: Result<T>) -> Result<T> {
        match (self, r) {
            (ErrorHandler::Fatal, Err(e)) => fatal(&e),
            (_, r) => r,
        }
    }
}
