! bench-pmpi-overhead's Fortran caller: n cheap wrapped calls (MPI_Send to
! MPI_PROC_NULL) through the Fortran binding of mpif.h, or the same through
! its PMPI_ entry, for the C++ driver to time like the C calls.
subroutine fortran_send_proc_null(n, wrapped) bind(C, name="fortran_send_proc_null")
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  include 'mpif.h'
  integer(c_int), value :: n, wrapped
  integer :: i, ierror, payload
  payload = 1
  if (wrapped /= 0) then
    do i = 1, n
      call MPI_SEND(payload, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_SELF, ierror)
    end do
  else
    do i = 1, n
      call PMPI_SEND(payload, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_SELF, ierror)
    end do
  end if
end subroutine fortran_send_proc_null
