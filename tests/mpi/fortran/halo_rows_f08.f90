! Rows with ghost rows, a swapped pair and their halo exchange through the
! flexmpi_f08 binding (type(MPI_Datatype) handles), on an emulated speed pair.
program halo_rows_f08
  use mpi_f08
  use flexmpi_f08
  implicit none
  include 'halo_rows.inc'
end program halo_rows_f08
