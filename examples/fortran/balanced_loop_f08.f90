! balanced_loop_f08 - README.md's first Fortran example (use mpi, module flexmpi) for
! use mpi_f08 programs: module flexmpi_f08, XMPI_COMM_WORLD a type(MPI_Comm).
program balanced_loop_f08
  use mpi_f08
  use flexmpi_f08
  implicit none
  integer, parameter :: n = 100000, maxit = 300
  integer :: rank, nprocs, count, displ, it, i
  integer, allocatable :: counts(:), displs(:)
  type(XMPI_Array) :: x_array  ! x's storage: flexmpi's, so that it can move it
  double precision, pointer :: x(:)
  double precision :: local, total, error

  call MPI_Init()  ! flexmpi starts here
  call MPI_Comm_rank(XMPI_COMM_WORLD, rank)
  call MPI_Comm_size(XMPI_COMM_WORLD, nprocs)
  call XMPI_Get_wsize(rank, nprocs, n, count, displ)  ! my rows: displ .. displ+count-1, from 0
  call XMPI_Register_vector(x_array, n, MPI_DOUBLE_PRECISION, XMPI_DISTRIBUTED)
  call XMPI_Array_pointer(x_array, x)  ! x(1:count) is my block
  x = [(dble(displ + i), i = 0, count - 1)]
  do it = 0, maxit - 1
    call XMPI_Monitor_iter_begin()
    x = 0.5d0 * x + 1.0d0  ! the computation
    local = sum(x)
    call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, XMPI_COMM_WORLD)
    call XMPI_Monitor_iter_end()
    ! After the iteration: may rebalance; count, displ and x's block are then new.
    call XMPI_Eval_lbalance(rank, nprocs, it, maxit, count, displ)
    call XMPI_Array_pointer(x_array, x)
  end do
  allocate(counts(nprocs), displs(nprocs))  ! every block, e.g. for a halo exchange
  call XMPI_Get_decomposition(nprocs, n, counts, displs)
  error = 0  ! x converges to 2 from its global row g: 2 + (g - 2) / 2^maxit
  do i = 1, count
    error = max(error, abs(x(i) - (2 + (displ + i - 1 - 2d0) * 0.5d0**maxit)))
  end do
  call MPI_Allreduce(MPI_IN_PLACE, error, 1, MPI_DOUBLE_PRECISION, MPI_MAX, XMPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0,a,es9.2,a)', 'rank 0 owns ', counts(1), ' rows from ', &
       displs(1), '; max error', error, merge(': ok   ', ': WRONG', error < 1d-9)
  call XMPI_Array_free(x_array)
  call MPI_Finalize()
end program balanced_loop_f08
