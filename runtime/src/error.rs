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
}

impl ErrorClass {
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
    eprintln!(
        "mpcrs: fatal error in {} on rank {}: {}: {}",
        err.call, err.rank, err.class, err.detail
    );
    crate::universe::abort_job(FATAL_EXIT_CODE)
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
