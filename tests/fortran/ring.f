      program ring
      implicit none
      include 'mpif.h'
      integer ierr, rank, nprocs, next, prev, token, i, n
      integer status(MPI_STATUS_SIZE)
      double precision x(4), s(4), t0
      character*(MPI_MAX_PROCESSOR_NAME) pname
      integer counter
      common /mine/ counter
      call MPI_INIT(ierr)
      t0 = MPI_WTIME()
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      counter = rank * 10
      next = mod(rank + 1, nprocs)
      prev = mod(rank + nprocs - 1, nprocs)
      if (rank .eq. 0) then
         token = 1
         call MPI_SEND(token, 1, MPI_INTEGER, next, 7,
     &        MPI_COMM_WORLD, ierr)
         call MPI_RECV(token, 1, MPI_INTEGER, prev, 7,
     &        MPI_COMM_WORLD, status, ierr)
      else
         call MPI_RECV(token, 1, MPI_INTEGER, prev, 7,
     &        MPI_COMM_WORLD, status, ierr)
         token = token + 1
         call MPI_SEND(token, 1, MPI_INTEGER, next, 7,
     &        MPI_COMM_WORLD, ierr)
      end if
      do i = 1, 4
         x(i) = rank + i
      end do
      call MPI_ALLREDUCE(MPI_IN_PLACE, x, 4, MPI_DOUBLE_PRECISION,
     &     MPI_SUM, MPI_COMM_WORLD, ierr)
      call MPI_GET_PROCESSOR_NAME(pname, n, ierr)
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      write(*,'(a,i3,a,i3,a,i3,a,f8.1,a,i4,a,i3)') 'rank', rank,
     &   ' token', token, ' src', status(MPI_SOURCE), ' sum', x(1),
     &   ' counter', counter, ' namelen', n
      call MPI_FINALIZE(ierr)
      end
