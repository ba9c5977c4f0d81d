! Rows with ghost rows, a swapped pair and their halo exchange through the
! `use flexmpi` binding (integer handles), on an emulated speed pair.
program halo_rows_use_mpi
  use mpi
  use flexmpi
  implicit none
  include 'halo_rows.inc'
end program halo_rows_use_mpi
