! Fortran through mpcrs's `mpi` module: special addresses (MPI_IN_PLACE,
! MPI_BOTTOM, MPI_STATUS_IGNORE), character arguments, attributes, a user
! reduction written in Fortran, an error handler that returns, LOGICAL
! arguments, and module and COMMON variables private to each rank.
module counters
  implicit none
  integer :: calls = 0
  integer :: deletes = 0
end module counters

subroutine wrapsum(invec, inoutvec, len, datatype)
  use counters
  implicit none
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  calls = calls + 1
  do i = 1, len
    inoutvec(i) = mod(invec(i) + inoutvec(i), 1000)
  end do
end subroutine wrapsum

! A copy procedure: the copy's value is the original's plus one.
subroutine plus_one(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = valin + 1 + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine plus_one

! A delete procedure: counts deletions.
subroutine count_delete(comm, keyval, val, extra, ierr)
  use mpi
  use counters
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  deletes = deletes + 1
  ierr = MPI_SUCCESS
end subroutine count_delete

subroutine check(ok, what)
  implicit none
  logical, intent(in) :: ok
  character(len=*), intent(in) :: what
  if (.not. ok) then
    print '(a,a)', 'FAILED: ', what
    stop 3
  end if
end subroutine check

program features
  use mpi
  use counters
  implicit none
  external wrapsum, plus_one, count_delete
  integer :: kv_plus, kv_dup, kv_none, dup
  integer(kind=MPI_ADDRESS_KIND) :: attr, zero
  integer :: ierr, rank, nprocs, i, n, op, stype, cart, errclass
  integer :: status(MPI_STATUS_SIZE), req, blocks(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub, addrs(2)
  integer :: vals(3), got(3), pair(2)
  double precision :: v(2), t0, t1
  real :: rin(2), rout(2)
  logical :: flag, lin, lout, periods(1)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=64) :: value
  integer :: info, dims(1), coords(1)
  integer :: tally
  common /tallies/ tally

  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  tally = rank
  t0 = MPI_Wtime()

  ! Names go in and out as blank-padded CHARACTER.
  call MPI_Comm_set_name(MPI_COMM_WORLD, 'the world   ', ierr)
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, n, ierr)
  call check(name == 'the world' .and. n == 9, 'comm name')

  ! Predefined attribute: the value, not a pointer.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')

  ! MPI_IN_PLACE and a reduction on REAL.
  rin = (/ real(rank), 1.0 /)
  call MPI_Allreduce(MPI_IN_PLACE, rin, 2, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(rin(1) == real(nprocs*(nprocs-1)/2) .and. rin(2) == real(nprocs), 'IN_PLACE sum')

  ! MAXLOC on (value, index) pairs of INTEGER.
  pair = (/ mod(rank * 7, nprocs), rank /)
  call MPI_Allreduce(MPI_IN_PLACE, pair, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(pair(1) == nprocs - 1 .or. nprocs == 1, 'MAXLOC')

  ! LOGICAL reduction.
  lin = rank >= 0
  call MPI_Allreduce(lin, lout, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(lout, 'LAND')

  ! A user operation written in Fortran.
  call MPI_Op_create(wrapsum, .true., op, ierr)
  vals = (/ rank, 2*rank, 300*rank /)
  call MPI_Reduce(vals, got, 3, MPI_INTEGER, op, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call check(got(2) == nprocs*(nprocs-1) .and. &
               got(3) == mod(150*nprocs*(nprocs-1), 1000), 'user op result')
  end if
  call MPI_Op_free(op, ierr)

  ! MPI_BOTTOM with absolute addresses in a struct type.
  call MPI_Get_address(vals(1), addrs(1), ierr)
  call MPI_Get_address(v(1), addrs(2), ierr)
  blocks = (/ 3, 2 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, blocks, addrs, types, stype, ierr)
  call MPI_Type_commit(stype, ierr)
  if (rank == 0) then
    vals = (/ 11, 22, 33 /)
    v = (/ 1.5d0, 2.5d0 /)
  end if
  call MPI_Bcast(MPI_BOTTOM, 1, stype, 0, MPI_COMM_WORLD, ierr)
  call check(vals(2) == 22 .and. v(2) == 2.5d0, 'MPI_BOTTOM bcast')
  call MPI_Type_free(stype, ierr)

  ! MPI_STATUS_IGNORE and a nonblocking pair with a status array.
  call MPI_Isend(rank, 1, MPI_INTEGER, mod(rank+1, nprocs), 5, MPI_COMM_WORLD, req, ierr)
  call MPI_Recv(n, 1, MPI_INTEGER, mod(rank+nprocs-1, nprocs), 5, MPI_COMM_WORLD, &
                MPI_STATUS_IGNORE, ierr)
  call check(n == mod(rank+nprocs-1, nprocs), 'ring with STATUS_IGNORE')
  call MPI_Wait(req, status, ierr)
  call check(req == MPI_REQUEST_NULL, 'request freed')

  ! Errors return to Fortran: ierr carries the class.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(n, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, errclass, i)
  call check(errclass == MPI_ERR_RANK, 'MPI_ERR_RANK returned')
  call MPI_Error_string(ierr, msg, n, i)
  call check(n > 0 .and. len_trim(msg) == n, 'error string')

  ! Info keys and values.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'color', 'blue', ierr)
  call MPI_Info_get(info, 'color', 64, value, flag, ierr)
  call check(flag .and. value == 'blue', 'info value')
  value = 'untouched'
  call MPI_Info_get(info, 'absent', 64, value, flag, ierr)
  call check(.not. flag .and. value == 'untouched', 'absent info key')
  call MPI_Info_free(info, ierr)

  ! LOGICAL arrays in: a periodic ring.
  dims(1) = nprocs
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_coords(cart, rank, 1, coords, ierr)
  call check(coords(1) == rank, 'cart coords')
  call MPI_Cart_shift(cart, 0, 1, i, n, ierr)
  call check(i == mod(rank+nprocs-1, nprocs), 'periodic shift')
  call MPI_Comm_free(cart, ierr)

  ! Keyvals with Fortran copy and delete procedures, and the predefined ones.
  zero = 0
  call MPI_Comm_create_keyval(plus_one, count_delete, kv_plus, zero, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv_dup, zero, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv_none, zero, ierr)
  attr = 100 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv_plus, attr, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv_dup, attr, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv_none, attr, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_get_attr(dup, kv_plus, attr, flag, ierr)
  call check(flag .and. attr == 101 + rank, 'Fortran copy procedure')
  call MPI_Comm_get_attr(dup, kv_dup, attr, flag, ierr)
  call check(flag .and. attr == 100 + rank, 'MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup, kv_none, attr, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup, ierr)
  call check(deletes == 1, 'Fortran delete procedure')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv_plus, ierr)
  call check(deletes == 2, 'delete_attr')
  call MPI_Comm_free_keyval(kv_plus, ierr)
  call check(kv_plus == MPI_KEYVAL_INVALID, 'keyval freed')

  t1 = MPI_Wtime()
  call check(t1 >= t0 .and. MPI_Wtick() > 0d0, 'MPI_Wtime')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  print '(a,i0,a,i0,a,i0)', 'rank ', rank, ' ok: op calls ', calls, ' tally ', tally
  call MPI_Finalize(ierr)
end program features
