! MPI_Comm_free and MPI_Comm_disconnect of XMPI_COMM_WORLD from a
! `use mpi_f08` program: both refused with MPI_ERR_COMM under
! MPI_ERRORS_RETURN, and the communicator still works. Freed, the next
! collective on it failed inside the MPI library.
program comm_free_world_f08
  use mpi_f08
  use flexmpi_f08
  implicit none
  type(MPI_Comm) :: comm
  integer :: freed, disconnected, freed_class, disconnected_class, rank, one, total, ierr

  call MPI_Init()
  call MPI_Comm_set_errhandler(XMPI_COMM_WORLD, MPI_ERRORS_RETURN)
  comm = XMPI_COMM_WORLD  ! XMPI_COMM_WORLD is protected: a copy of the handle goes in
  call MPI_Comm_free(comm, freed)
  call MPI_Comm_disconnect(comm, disconnected)
  call MPI_Error_class(freed, freed_class)
  call MPI_Error_class(disconnected, disconnected_class)
  call MPI_Comm_rank(XMPI_COMM_WORLD, rank)
  one = 1
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, XMPI_COMM_WORLD, ierr)
  if (freed_class == MPI_ERR_COMM .and. disconnected_class == MPI_ERR_COMM .and. &
      comm == XMPI_COMM_WORLD .and. ierr == MPI_SUCCESS) then
    print '(a,i0,a)', 'rank ', rank, ': both refused, XMPI_COMM_WORLD works'
  else
    print '(a,i0,a,i0,a,i0)', 'rank ', rank, ': WRONG: classes ', freed_class, ' and ', &
        disconnected_class
  end if
  call MPI_Finalize()
end program comm_free_world_f08
