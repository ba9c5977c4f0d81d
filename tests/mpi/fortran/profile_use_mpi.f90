! An unmodified `use mpi` program, profiled with flexmpi preloaded.
program profile_use_mpi
  use mpi
  implicit none
  include 'profile_calls.inc'
end program profile_use_mpi
