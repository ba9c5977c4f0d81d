! An unmodified mpif.h program, profiled with flexmpi preloaded.
program profile_mpif
  implicit none
  include 'mpif.h'
  include 'profile_calls.inc'
end program profile_mpif
