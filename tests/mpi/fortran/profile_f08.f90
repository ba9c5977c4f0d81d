! An unmodified `use mpi_f08` program, profiled with flexmpi preloaded: the
! calls of profile_calls.inc, without the optional ierror.
program profile_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, i, other
  integer :: sent(10), received(20), mine(3), theirs(3), ranks(2)
  type(MPI_Request) :: requests(2)
  double precision :: sums(4), values(8), pair(2)
  logical :: good

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  good = nprocs == 2
  other = 1 - rank

  do i = 1, 5
    sums = rank + i
    call MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    good = good .and. all(sums == 2 * i + 1)
  end do

  if (rank == 0) then
    sent = [(i, i = 1, 10)]
    call MPI_Send(sent, 10, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
  else
    received = 0
    call MPI_Recv(received, 20, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    good = good .and. all(received(1:10) == [(i, i = 1, 10)])
  end if

  values = 0
  if (rank == 0) values = 2.5d0
  call MPI_Bcast(values, 8, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  good = good .and. all(values == 2.5d0)

  mine = rank + 10
  call MPI_Irecv(theirs, 3, MPI_INTEGER, other, 3, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(mine, 3, MPI_INTEGER, other, 3, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  good = good .and. all(theirs == other + 10)

  pair = rank + 1
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, pair, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
    good = good .and. all(pair == 3)
  else
    call MPI_Reduce(pair, pair, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  end if

  ! In place, the send count is ignored: its own block counts as sent.
  ranks = -1
  ranks(rank + 1) = rank
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_INTEGER, ranks, 1, MPI_INTEGER, MPI_COMM_WORLD)
  good = good .and. all(ranks == [0, 1])

  if (good) print '(a,i0,a)', 'rank ', rank, ': results correct'
  call MPI_Finalize()
end program profile_f08
