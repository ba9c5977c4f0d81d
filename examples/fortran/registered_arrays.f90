! registered_arrays - every kind of registered array of the Fortran interface
! (module flexmpi, `use mpi`) following its rows: a distributed vector, a
! replicated vector, a dense matrix, a vector distributed in place and a CSR
! matrix, each holding values that name their global row, are moved with
! XMPI_Redistribute_data to rank 0 alone and back to the block partition; the
! Fortran pointers, associated again after each move, must show every row's
! own values. Also: a record, monitoring, the error codes and messages.
! Prints "registered_arrays: ok" on rank 0, or what is wrong and fails.
program registered_arrays
  use mpi
  use flexmpi
  implicit none
  integer, parameter :: n = 11, nnz = n
  type(XMPI_Array) :: vector, replicated, dense, in_place, sparse
  integer :: rank, nprocs, count, displ, ierr, code, compare, status
  integer :: counts(64), displs(64), block_ia(n + 1), k
  integer(8) :: iterations, event_counts(1)
  double precision :: wall, steps(3)
  logical :: changed
  save :: steps  ! a record must stay where it is while registered

  call MPI_Init(ierr)
  call MPI_Comm_rank(XMPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(XMPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_compare(XMPI_COMM_WORLD, MPI_COMM_WORLD, compare, ierr)
  call expect(compare == MPI_CONGRUENT, 'XMPI_COMM_WORLD is a copy of MPI_COMM_WORLD')
  call expect(XMPI_Get_process_status() == XMPI_RUNNING, 'status XMPI_RUNNING')

  ! Errors: a code in ierror and a message, nothing stops.
  call XMPI_Get_wsize(rank, nprocs, -1, count, displ, code)
  call expect(code == XMPI_ERR_ARG, 'XMPI_Get_wsize(dsize=-1) is XMPI_ERR_ARG')
  call expect(len(XMPI_Last_error_message()) > 0, 'a failure leaves a message')
  call expect(len(XMPI_Error_string(XMPI_ERR_ARG)) > 0, 'XMPI_Error_string explains a code')
  call XMPI_Checkpoint(1, code)
  call expect(code == XMPI_ERR_STATE, 'XMPI_Checkpoint without FLEXMPI_CHECKPOINT: XMPI_ERR_STATE')
  call XMPI_Remove(1, ierror=code)  ! XMPI_ERR_UNSUPPORTED where MPI cannot spawn
  call expect(code == XMPI_ERR_ARG .or. code == XMPI_ERR_UNSUPPORTED, &
       'XMPI_Remove of an unspawned process: XMPI_ERR_ARG')

  call XMPI_Get_wsize(rank, nprocs, n, count, displ)
  call XMPI_Register_vector(vector, n, MPI_DOUBLE_PRECISION, XMPI_DISTRIBUTED)
  call XMPI_Register_vector(replicated, n, MPI_INTEGER, XMPI_REPLICATED)
  call XMPI_Register_dense(dense, n, MPI_REAL, XMPI_DISTRIBUTED)
  call XMPI_Register_vector(in_place, n, MPI_DOUBLE_PRECISION, XMPI_DISTRIBUTED_IN_PLACE)
  block_ia(:count + 1) = [(k, k = 0, count)]  ! one nonzero a row
  call XMPI_Register_sparse(sparse, n, nnz, block_ia(:count + 1), MPI_DOUBLE_PRECISION, &
       XMPI_DISTRIBUTED)
  call XMPI_Register_record('steps', steps, 3, MPI_DOUBLE_PRECISION)
  call fill(displ, count)
  call check(displ, count, 'after registration')

  ! One monitored iteration with the WORK event.
  call XMPI_Monitor_iter_begin(['WORK'], code)
  if (code /= XMPI_ERR_EVENT) then
     call expect(code == XMPI_SUCCESS, 'XMPI_Monitor_iter_begin([''WORK''])')
     call XMPI_Monitor_iter_end(event_counts)
     call XMPI_Get_monitor_totals(iterations=iterations, wall=wall)
     call expect(iterations == 1 .and. wall >= 0, 'XMPI_Get_monitor_totals: 1 iteration')
  end if

  ! Every row to rank 0, then back to the block partition.
  call XMPI_Redistribute_data(count, displ, merge(n, 0, rank == 0), 0)
  call XMPI_Get_blocks_changed(changed)
  call expect(changed .eqv. nprocs > 1, 'XMPI_Get_blocks_changed after the move to rank 0')
  call check(0, merge(n, 0, rank == 0), 'on rank 0 alone')
  call XMPI_Redistribute_data(merge(n, 0, rank == 0), 0, count, displ)
  call XMPI_Get_decomposition(nprocs, n, counts, displs)
  call expect(counts(rank + 1) == count .and. displs(rank + 1) == displ, 'XMPI_Get_decomposition')
  call check(displ, count, 'back on the block partition')

  call XMPI_Unregister(vector)
  call XMPI_Unregister_record(steps)
  call XMPI_Unregister(vector, code)
  call expect(code == XMPI_ERR_ARG, 'unregistering twice: XMPI_ERR_ARG')
  call XMPI_Array_free(vector)
  call XMPI_Array_free(replicated)
  call XMPI_Array_free(dense)
  call XMPI_Array_free(in_place)
  call XMPI_Array_free(sparse)
  if (rank == 0) print '(a)', 'registered_arrays: ok'
  call MPI_Finalize(ierr)

contains

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (condition) return
    write (0, '(a,i0,a)') 'registered_arrays: rank ', rank, ': FAILED: ' // what // ' (' // &
         XMPI_Last_error_message() // ')'
    call MPI_Abort(MPI_COMM_WORLD, 1, status)
  end subroutine expect

  ! Row i (0-based) holds i in every structure: i + 0.5 in the vectors, the
  ! dense row i (i * n + column), the sparse row i one nonzero at column i.
  subroutine fill(first, rows)
    integer, intent(in) :: first, rows
    double precision, pointer :: v(:), values(:)
    integer, pointer :: r(:), ia(:), ja(:)
    real, pointer :: a(:, :)
    integer :: i, j
    call XMPI_Array_pointer(vector, v)
    call XMPI_Array_pointer(in_place, values)
    v = [(first + i + 0.5d0, i = 0, rows - 1)]
    values = v
    call XMPI_Array_pointer(replicated, r)
    r = [(i, i = 0, n - 1)]
    call XMPI_Array_pointer(dense, a)
    a = reshape([((real((first + i) * n + j), j = 0, n - 1), i = 0, rows - 1)], [n, rows])
    call XMPI_Sparse_indices(sparse, ia, ja)
    call XMPI_Array_pointer(sparse, values)
    ja = [(first + i, i = 0, rows - 1)]
    values = [(first + i + 0.5d0, i = 0, rows - 1)]
    steps = [1d0, 2d0, 3d0]
  end subroutine fill

  subroutine check(first, rows, when)
    integer, intent(in) :: first, rows
    character(len=*), intent(in) :: when
    double precision, pointer :: v(:), values(:)
    integer, pointer :: r(:), ia(:), ja(:)
    real, pointer :: a(:, :)
    integer :: i, j
    call XMPI_Array_pointer(vector, v)
    call expect(size(v) == rows .and. all(v == [(first + i + 0.5d0, i = 0, rows - 1)]), &
         'the distributed vector ' // when)
    call XMPI_Array_pointer(in_place, v)
    call expect(size(v) == rows .and. all(v == [(first + i + 0.5d0, i = 0, rows - 1)]), &
         'the vector distributed in place ' // when)
    call XMPI_Array_pointer(replicated, r)
    call expect(all(r == [(i, i = 0, n - 1)]), 'the replicated vector ' // when)
    call XMPI_Array_pointer(dense, a)
    call expect(all(shape(a) == [n, rows]), 'the dense matrix''s shape ' // when)
    call expect(all(a == reshape([((real((first + i) * n + j), j = 0, n - 1), i = 0, rows - 1)], &
         [n, rows])), 'the dense matrix ' // when)
    call expect(XMPI_Array_rows(dense) == rows, 'XMPI_Array_rows ' // when)
    call XMPI_Sparse_indices(sparse, ia, ja)
    call XMPI_Array_pointer(sparse, values)
    call expect(all(ia == [(i, i = 0, rows)]) .and. all(ja == [(first + i, i = 0, rows - 1)]) &
         .and. all(values == [(first + i + 0.5d0, i = 0, rows - 1)]), 'the CSR matrix ' // when)
    call expect(all(steps == [1d0, 2d0, 3d0]), 'the record ' // when)
  end subroutine check

end program registered_arrays
