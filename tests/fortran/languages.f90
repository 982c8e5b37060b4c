! Attributes across languages (MPI-4.0 section 19.3.7): a value Fortran sets
! is read by C through a pointer to it; a pointer C sets is read by Fortran as
! its address. Also what Fortran numbers from 1 (MPI_WAITANY's index) and
! MPI-1's INTEGER displacements (MPI_TYPE_HINDEXED).
program languages
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, keyval, errs, idx, reqs(2), t, size
  integer :: hlens(2), hdispls(2), buf(8), got(8), i
  integer(kind=MPI_ADDRESS_KIND) :: val, zero, address
  logical :: flag
  integer :: c_reads_fortran, c_sets_pointer
  external c_reads_fortran, c_sets_pointer

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  errs = 0
  zero = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, zero, ierr)
  val = 5555 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, val, ierr)
  errs = errs + c_reads_fortran(keyval, 5555 + rank)
  address = 0
  errs = errs + c_sets_pointer(keyval, address)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, val, flag, ierr)
  if (.not. flag .or. val /= address .or. address == 0) errs = errs + 1
  call MPI_Comm_free_keyval(keyval, ierr)

  ! Waitany's index counts from 1; MPI_UNDEFINED once all are done.
  call MPI_Irecv(buf, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, reqs(2), ierr)
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Send(rank, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  if (idx /= 2) errs = errs + 1
  call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  if (idx /= MPI_UNDEFINED) errs = errs + 1

  ! MPI-1's hindexed takes INTEGER byte displacements.
  hlens = (/ 2, 2 /)
  hdispls = (/ 0, 16 /)
  call MPI_Type_hindexed(2, hlens, hdispls, MPI_INTEGER, t, ierr)
  call MPI_Type_commit(t, ierr)
  call MPI_Type_size(t, size, ierr)
  if (size /= 16) errs = errs + 1
  buf = (/ (i, i = 1, 8) /)
  got = 0
  call MPI_Sendrecv(buf, 1, t, rank, 3, got, 4, MPI_INTEGER, rank, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (any(got(1:4) /= (/ 1, 2, 5, 6 /))) errs = errs + 1
  call MPI_Type_free(t, ierr)

  print '(a,i0,a,i0)', 'rank ', rank, ' errors ', errs
  call MPI_Finalize(ierr)
end program languages
