//! MPI-4.1's handles as ints (MPI_Comm_toint, MPI_Comm_fromint, ...) and
//! the session handle's Fortran conversions. Handles are ints in the MPICH
//! ABI, so these are identities, but for MPI_File, which converts as
//! MPI_File_c2f and MPI_File_f2c do.

use std::os::raw::c_int;

use crate::ctypes::{MPI_File, MPI_Fint, MPI_Group, MPI_Info, MPI_Message, MPI_Win};
use crate::export::mpi_fn;
use crate::handles::*;
use crate::sessions::MPI_Session;

/// `same! { Name(arg: Type) -> Ret; ... }`: conversions that return their argument.
macro_rules! same {
    ($( $name:ident ( $arg:ident : $ty:ty ) -> $ret:ty ; )*) => {
        mpi_fn! {
            $(
                fn $name($arg: $ty) -> $ret {
                    $arg
                }
            )*
        }
    };
}

same! {
    Comm_toint(comm: MPI_Comm) -> c_int;
    Comm_fromint(comm: c_int) -> MPI_Comm;
    Errhandler_toint(errhandler: MPI_Errhandler) -> c_int;
    Errhandler_fromint(errhandler: c_int) -> MPI_Errhandler;
    Group_toint(group: MPI_Group) -> c_int;
    Group_fromint(group: c_int) -> MPI_Group;
    Info_toint(info: MPI_Info) -> c_int;
    Info_fromint(info: c_int) -> MPI_Info;
    Message_toint(message: MPI_Message) -> c_int;
    Message_fromint(message: c_int) -> MPI_Message;
    Op_toint(op: MPI_Op) -> c_int;
    Op_fromint(op: c_int) -> MPI_Op;
    Request_toint(request: MPI_Request) -> c_int;
    Request_fromint(request: c_int) -> MPI_Request;
    Session_toint(session: MPI_Session) -> c_int;
    Session_fromint(session: c_int) -> MPI_Session;
    Type_toint(datatype: MPI_Datatype) -> c_int;
    Type_fromint(datatype: c_int) -> MPI_Datatype;
    Win_toint(win: MPI_Win) -> c_int;
    Win_fromint(win: c_int) -> MPI_Win;
    Session_c2f(session: MPI_Session) -> MPI_Fint;
    Session_f2c(session: MPI_Fint) -> MPI_Session;
}

mpi_fn! {
    fn File_toint(file: MPI_File) -> c_int {
        crate::files::to_fortran(file)
    }

    fn File_fromint(file: c_int) -> MPI_File {
        crate::files::from_fortran(file)
    }
}
