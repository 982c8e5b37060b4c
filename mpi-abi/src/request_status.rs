//! MPI-4.1's MPI_Request_get_status_all, _any and _some: MPI_Testall,
//! _any and _some that leave every request as it is (none is freed or made
//! inactive), built on MPI_Request_get_status.

use std::os::raw::c_int;

use mpcrs::ErrorClass;

use crate::export::mpi_fn;
use crate::handles::*;
use crate::requests::{idle, invalid_request, PMPI_Request_get_status};

/// Where a status goes: the caller's `i`-th, or nowhere.
fn nth(statuses: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if status_ignored(statuses) {
        statuses
    } else {
        statuses.wrapping_add(i)
    }
}

/// Whether each request is active (`false`: null or inactive persistent),
/// or the error for the first handle that names no request.
///
/// # Safety
/// `requests` holds `count` handles.
unsafe fn activity(
    call: &'static str,
    count: c_int,
    requests: *const MPI_Request,
) -> Result<Vec<bool>, c_int> {
    // SAFETY: by contract.
    let hs = unsafe { c_array(requests, count.max(0) as usize) };
    hs.iter()
        .map(|&h| {
            // SAFETY: MPI_STATUS_IGNORE: nothing is written.
            match unsafe { idle(h, std::ptr::without_provenance_mut(1)) } {
                Some(inactive) => Ok(!inactive),
                None => Err(invalid_request(call, h)),
            }
        })
        .collect()
}

/// The completion of request `h` without touching it: (complete, code).
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE or writable.
unsafe fn peek(h: MPI_Request, status: *mut MPI_Status) -> (bool, c_int) {
    let mut flag = 0;
    // SAFETY: by contract.
    let rc = unsafe { PMPI_Request_get_status(h, &mut flag, status) };
    (flag != 0, rc)
}

/// Records a failed operation's code in its status (MPI_ERR_IN_STATUS).
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE or writable.
unsafe fn note_error(status: *mut MPI_Status, rc: c_int) {
    if !status_ignored(status) {
        // SAFETY: by contract.
        unsafe { (*status).MPI_ERROR = rc };
    }
}

mpi_fn! {
    fn Request_get_status_all(count: c_int, array_of_requests: *const MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        let call = "MPI_Request_get_status_all";
        // SAFETY: `count` handles by contract.
        let active = match unsafe { activity(call, count, array_of_requests) } {
            Ok(a) => a,
            Err(code) => return code,
        };
        let mut codes = Vec::with_capacity(active.len());
        for i in 0..active.len() {
            // SAFETY: `count` handles and statuses, by contract.
            let (done, rc) = unsafe { peek(*array_of_requests.add(i), nth(array_of_statuses, i)) };
            if !done {
                // SAFETY: writable by contract.
                unsafe { *flag = 0 };
                return MPI_SUCCESS;
            }
            codes.push(rc);
        }
        // SAFETY: writable by contract.
        unsafe { *flag = 1 };
        if codes.iter().all(|&rc| rc == MPI_SUCCESS) {
            return MPI_SUCCESS;
        }
        for (i, &rc) in codes.iter().enumerate() {
            // SAFETY: `count` statuses, by contract.
            unsafe { note_error(nth(array_of_statuses, i), rc) };
        }
        ErrorClass::InStatus as c_int
    }

    fn Request_get_status_any(count: c_int, array_of_requests: *const MPI_Request, indx: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let call = "MPI_Request_get_status_any";
        // SAFETY: `count` handles by contract.
        let active = match unsafe { activity(call, count, array_of_requests) } {
            Ok(a) => a,
            Err(code) => return code,
        };
        for (i, _) in active.iter().enumerate().filter(|(_, &a)| a) {
            // SAFETY: `count` handles by contract; `status` as the caller's.
            let (done, rc) = unsafe { peek(*array_of_requests.add(i), status) };
            if done {
                // SAFETY: writable by contract.
                unsafe { (*indx, *flag) = (i as c_int, 1) };
                return rc;
            }
        }
        // No active request: complete at once, with the empty status.
        let none_active = !active.contains(&true);
        // SAFETY: writable by contract.
        unsafe {
            *indx = MPI_UNDEFINED;
            *flag = none_active as c_int;
            if none_active {
                write_status(status, &mpcrs::Status::inactive());
            }
        }
        MPI_SUCCESS
    }

    fn Request_get_status_some(incount: c_int, array_of_requests: *const MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        let call = "MPI_Request_get_status_some";
        // SAFETY: `incount` handles by contract.
        let active = match unsafe { activity(call, incount, array_of_requests) } {
            Ok(a) => a,
            Err(code) => return code,
        };
        if !active.contains(&true) {
            // SAFETY: writable by contract.
            unsafe { *outcount = MPI_UNDEFINED };
            return MPI_SUCCESS;
        }
        let mut n = 0;
        let mut failed = false;
        for (i, _) in active.iter().enumerate().filter(|(_, &a)| a) {
            let out = nth(array_of_statuses, n);
            // SAFETY: `incount` handles, indices and statuses, by contract.
            let (done, rc) = unsafe { peek(*array_of_requests.add(i), out) };
            if done {
                // SAFETY: as above.
                unsafe {
                    *array_of_indices.add(n) = i as c_int;
                    note_error(out, rc);
                }
                failed |= rc != MPI_SUCCESS;
                n += 1;
            }
        }
        // SAFETY: writable by contract.
        unsafe { *outcount = n as c_int };
        if failed {
            ErrorClass::InStatus as c_int
        } else {
            MPI_SUCCESS
        }
    }
}
