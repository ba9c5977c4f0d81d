! flexmpi_f08 - the Fortran interface of flexmpi for programs with
! `use mpi_f08`: everything of flexmpi_base, with the routines that take MPI
! handles taking type(MPI_Datatype) and type(MPI_Info), and XMPI_COMM_WORLD
! a type(MPI_Comm). Each routine passes the handle's MPI_VAL to flexmpi_base's.
module flexmpi_f08
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Info
  use flexmpi_base, base_register_vector => XMPI_Register_vector, &
       base_register_dense => XMPI_Register_dense, base_register_sparse => XMPI_Register_sparse, &
       base_register_rows => XMPI_Register_rows, base_register_pair => XMPI_Register_pair, &
       base_register_record => XMPI_Register_record, base_spawn => XMPI_Spawn
  implicit none
  private :: base_register_vector, base_register_dense, base_register_sparse
  private :: base_register_rows, base_register_pair, base_register_record, base_spawn

  !> Use it wherever the program used MPI_COMM_WORLD: current from MPI_Init on
  !> and after every reconfiguration (bound to the C side's handle); read-only.
  type(MPI_Comm), bind(C, name='flexmpi_f_comm_world'), protected :: XMPI_COMM_WORLD

contains

  subroutine XMPI_Register_vector(array, size, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: size, scheme
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(out), optional :: ierror
    call base_register_vector(array, size, datatype%MPI_VAL, scheme, ierror)
  end subroutine XMPI_Register_vector

  subroutine XMPI_Register_dense(array, size, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: size, scheme
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(out), optional :: ierror
    call base_register_dense(array, size, datatype%MPI_VAL, scheme, ierror)
  end subroutine XMPI_Register_dense

  subroutine XMPI_Register_rows(array, rows, row_length, ghost_rows, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: rows, row_length, ghost_rows, scheme
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(out), optional :: ierror
    call base_register_rows(array, rows, row_length, ghost_rows, datatype%MPI_VAL, scheme, ierror)
  end subroutine XMPI_Register_rows

  subroutine XMPI_Register_pair(pair, rows, row_length, ghost_rows, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: pair
    integer, intent(in) :: rows, row_length, ghost_rows, scheme
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(out), optional :: ierror
    call base_register_pair(pair, rows, row_length, ghost_rows, datatype%MPI_VAL, scheme, ierror)
  end subroutine XMPI_Register_pair

  subroutine XMPI_Register_sparse(array, size, nnz, ia, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: size, nnz, ia(:), scheme
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(out), optional :: ierror
    call base_register_sparse(array, size, nnz, ia, datatype%MPI_VAL, scheme, ierror)
  end subroutine XMPI_Register_sparse

  subroutine XMPI_Register_record(name, buffer, count, datatype, ierror)
    character(len=*), intent(in) :: name
    type(*), dimension(..), target, intent(in) :: buffer
    integer, intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(out), optional :: ierror
    call base_register_record(name, buffer, count, datatype%MPI_VAL, ierror)
  end subroutine XMPI_Register_record

  subroutine XMPI_Spawn(command, argv, nprocs, info, node_class, ierror)
    character(len=*), intent(in), optional :: command, argv(:), node_class(:)
    integer, intent(in) :: nprocs
    type(MPI_Info), intent(in), optional :: info
    integer, intent(out), optional :: ierror
    if (present(info)) then
       call base_spawn(command, argv, nprocs, info%MPI_VAL, node_class, ierror)
    else
       call base_spawn(command, argv, nprocs, node_class=node_class, ierror=ierror)
    end if
  end subroutine XMPI_Spawn

end module flexmpi_f08
