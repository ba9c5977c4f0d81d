! flexmpi - the Fortran interface of flexmpi for programs with `use mpi` or
! mpif.h (integer handles): everything of flexmpi_base, and XMPI_COMM_WORLD,
! the integer handle of the application's communicator.
module flexmpi
  use, intrinsic :: iso_c_binding, only: c_int
  use flexmpi_base
  implicit none
  public

  !> Use it wherever the program used MPI_COMM_WORLD. It is bound to the C
  !> side's handle (src/base/context.cpp), so it is current from MPI_Init on
  !> and after every reconfiguration; read-only.
  integer(c_int), bind(C, name='flexmpi_f_comm_world'), protected :: XMPI_COMM_WORLD
end module flexmpi
