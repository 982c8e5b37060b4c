//! MPI-4 large-count (`_c`) forms of the datatype constructors and packing.
//! Each takes the ordinary call's path (see large_count.rs): a count that
//! fits an int is passed as it is; a larger one is carried by a datatype
//! made for the call where the call allows it, and fails with MPI_ERR_COUNT
//! naming the call where it does not. Nothing is ever truncated.

use std::os::raw::{c_char, c_int, c_void};

use crate::ctypes::MPI_Count;
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::large_count as lc;

mpi_fn! {
    fn Pack_c(inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Pack_c";
        let incount_ = tri!(lc::pair(CALL, incount, datatype));
        let outsize = tri!(lc::int(CALL, outsize, "outsize"));
        let mut position_ = tri!(lc::int(CALL, *position, "position"));
        // SAFETY: the caller's arguments, counts narrowed; outputs written back widened.
        unsafe {
            let rc = crate::abi::PMPI_Pack(inbuf, incount_.n, incount_.t, outbuf, outsize, &mut position_, comm);
            if rc == MPI_SUCCESS { *position = position_ as MPI_Count; }
            rc
        }
    }

    fn Pack_external_c(datarep: *const c_char, inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count) -> c_int {
        const CALL: &str = "MPI_Pack_external_c";
        let incount_ = tri!(lc::pair(CALL, incount, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Pack_external(datarep, inbuf, incount_.n, incount_.t, outbuf, outsize, position.cast()) }
    }

    fn Pack_external_size_c(datarep: *const c_char, incount: MPI_Count, datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
        const CALL: &str = "MPI_Pack_external_size_c";
        let incount_ = tri!(lc::pair(CALL, incount, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Pack_external_size(datarep, incount_.n, incount_.t, size.cast()) }
    }

    fn Pack_size_c(incount: MPI_Count, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut MPI_Count) -> c_int {
        const CALL: &str = "MPI_Pack_size_c";
        let incount_ = tri!(lc::pair(CALL, incount, datatype));
        let mut size_: c_int = 0;
        // SAFETY: the caller's arguments, counts narrowed; outputs written back widened.
        unsafe {
            let rc = crate::abi::PMPI_Pack_size(incount_.n, incount_.t, comm, &mut size_);
            if rc == MPI_SUCCESS && !size.is_null() { *size = size_ as MPI_Count; }
            rc
        }
    }

    fn Type_create_darray_c(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const MPI_Count, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_create_darray_c";
        let array_of_gsizes = tri!(lc::ints(CALL, array_of_gsizes, ndims as usize, "array_of_gsizes"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_create_darray(size, rank, ndims, lc::at(&array_of_gsizes), array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype) }
    }

    fn Type_create_hindexed_block_c(count: MPI_Count, blocklength: MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_create_hindexed_block_c";
        let count = tri!(lc::int(CALL, count, "count"));
        let blocklength = tri!(lc::int(CALL, blocklength, "blocklength"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_create_hindexed_block(count, blocklength, array_of_displacements.cast(), oldtype, newtype) }
    }

    fn Type_create_hvector_c(count: MPI_Count, blocklength: MPI_Count, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_create_hvector_c";
        let count = tri!(lc::int(CALL, count, "count"));
        let blocklength = tri!(lc::int(CALL, blocklength, "blocklength"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype) }
    }

    fn Type_create_resized_c(oldtype: MPI_Datatype, lb: MPI_Count, extent: MPI_Count, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: the caller's arguments, the same types.
        unsafe { crate::abi::PMPI_Type_create_resized(oldtype, lb, extent, newtype) }
    }

    fn Type_create_struct_c(count: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_create_struct_c";
        let count = tri!(lc::int(CALL, count, "count"));
        let array_of_blocklengths = tri!(lc::ints(CALL, array_of_blocklengths, count as usize, "array_of_blocklengths"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_create_struct(count, lc::at(&array_of_blocklengths), array_of_displacements.cast(), array_of_types, newtype) }
    }

    fn Type_create_subarray_c(ndims: c_int, array_of_sizes: *const MPI_Count, array_of_subsizes: *const MPI_Count, array_of_starts: *const MPI_Count, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_create_subarray_c";
        let array_of_sizes = tri!(lc::ints(CALL, array_of_sizes, ndims as usize, "array_of_sizes"));
        let array_of_subsizes = tri!(lc::ints(CALL, array_of_subsizes, ndims as usize, "array_of_subsizes"));
        let array_of_starts = tri!(lc::ints(CALL, array_of_starts, ndims as usize, "array_of_starts"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_create_subarray(ndims, lc::at(&array_of_sizes), lc::at(&array_of_subsizes), lc::at(&array_of_starts), order, oldtype, newtype) }
    }

    fn Type_indexed_c(count: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_indexed_c";
        let count = tri!(lc::int(CALL, count, "count"));
        let array_of_blocklengths = tri!(lc::ints(CALL, array_of_blocklengths, count as usize, "array_of_blocklengths"));
        let array_of_displacements = tri!(lc::ints(CALL, array_of_displacements, count as usize, "array_of_displacements"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_indexed(count, lc::at(&array_of_blocklengths), lc::at(&array_of_displacements), oldtype, newtype) }
    }

    fn Type_vector_c(count: MPI_Count, blocklength: MPI_Count, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Type_vector_c";
        let count = tri!(lc::int(CALL, count, "count"));
        let blocklength = tri!(lc::int(CALL, blocklength, "blocklength"));
        let stride = tri!(lc::int(CALL, stride, "stride"));
        // SAFETY: the caller's arguments, counts narrowed.
        unsafe { crate::abi::PMPI_Type_vector(count, blocklength, stride, oldtype, newtype) }
    }

    fn Unpack_c(inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        const CALL: &str = "MPI_Unpack_c";
        let insize = tri!(lc::int(CALL, insize, "insize"));
        let mut position_ = tri!(lc::int(CALL, *position, "position"));
        let outcount_ = tri!(lc::pair(CALL, outcount, datatype));
        // SAFETY: the caller's arguments, counts narrowed; outputs written back widened.
        unsafe {
            let rc = crate::abi::PMPI_Unpack(inbuf, insize, &mut position_, outbuf, outcount_.n, outcount_.t, comm);
            if rc == MPI_SUCCESS { *position = position_ as MPI_Count; }
            rc
        }
    }

    fn Unpack_external_c(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype) -> c_int {
        const CALL: &str = "MPI_Unpack_external_c";
        let outcount_ = tri!(lc::pair(CALL, outcount, datatype));
        // SAFETY: the caller's arguments, counts narrowed, or carried by a type made for the call.
        unsafe { crate::abi::PMPI_Unpack_external(datarep, inbuf, insize, position.cast(), outbuf, outcount_.n, outcount_.t) }
    }
}
