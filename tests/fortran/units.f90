! Fortran units are each rank's own, as in a process of its own: every rank
! opens unit 10 on a file named after it and writes three lines to it, the
! ranks taking turns line by line, then reads its file back. A unit table
! shared by the ranks of a process would send one rank's lines into another's
! file.
program units
  use mpi
  implicit none
  integer :: rank, ierr, k, ios, lines
  character(len=64) :: fname, line
  logical :: mine

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  write (fname, '(A,I0)') 'unit-file.', rank
  open (unit=10, file=fname, status='replace', action='write')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  do k = 1, 3
     write (10, '(A,I0,A,I0)') 'rank ', rank, ' line ', k
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  close (10)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  open (unit=10, file=fname, status='old', action='read')
  lines = 0
  mine = .true.
  do
     read (10, '(A)', iostat=ios) line
     if (ios /= 0) exit
     lines = lines + 1
     write (fname, '(A,I0,A,I0)') 'rank ', rank, ' line ', lines
     mine = mine .and. line == fname
  end do
  close (10, status='delete')
  print '(A,I0,A,I0,A,L1)', 'rank ', rank, ' lines ', lines, ' own ', mine
  call MPI_Finalize(ierr)
end program units
