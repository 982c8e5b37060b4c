//! Special rank and tag values, with MPICH's numbers so the C ABI maps them 1:1.

/// MPI_ANY_SOURCE.
pub const ANY_SOURCE: i32 = -2;
/// MPI_PROC_NULL: sends and receives complete at once and move no data.
pub const PROC_NULL: i32 = -1;
/// MPI_ANY_TAG.
pub const ANY_TAG: i32 = -1;
/// MPI_UNDEFINED (color of ranks that join no communicator in split, etc.).
pub const UNDEFINED: i32 = -32766;
/// MPI_TAG_UB: the largest valid tag.
pub const TAG_UB: i32 = i32::MAX;
