! flexmpi_arrays - registered data (thesis 4.5) in flexmpi-owned storage,
! for flexmpi_base: vectors, dense and CSR matrices, rows with ghost rows and
! swapped pairs of them, their halo exchanges, the Fortran pointers onto
! their blocks, and the application's own records a checkpoint saves.
module flexmpi_arrays
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use flexmpi_binding
  implicit none
  private

  ! A registered vector, dense matrix, CSR matrix, rows with ghost rows or
  ! swapped pair of them, in flexmpi-owned storage.
  type, public :: XMPI_Array
     private
     type(c_ptr) :: handle = c_null_ptr
  end type XMPI_Array

  public :: XMPI_Register_vector, XMPI_Register_dense, XMPI_Register_sparse
  public :: XMPI_Register_rows, XMPI_Register_pair
  public :: XMPI_Register_record, XMPI_Unregister, XMPI_Unregister_record, XMPI_Array_free
  public :: XMPI_Array_pointer, XMPI_Sparse_indices, XMPI_Array_rows, XMPI_Array_swap
  public :: XMPI_Halo_exchange, XMPI_Halo_start, XMPI_Halo_finish

  ! A Fortran pointer onto a registered array's block: rank 1 (all local
  ! elements) or rank 2 (row_length x rows: a dense matrix's row r is p(:, r)),
  ! with the ghost rows around the block (rank 1: elements 1-ghost_rows*row_length
  ! to 0 and after the block's); of a pair, the current buffer, and the next
  ! one in the optional third argument.
  interface XMPI_Array_pointer
     module procedure pointer_real64_1, pointer_real64_2, pointer_real32_1, pointer_real32_2, &
          pointer_int32_1, pointer_int32_2
  end interface XMPI_Array_pointer

  ! Where a registered array's buffers are and how they are laid out
  ! (flexmpi_f_view): `elements` of the block (a sparse matrix's nonzeros),
  ! `held` with the ghost rows, which start the buffer.
  type :: Layout
     type(c_ptr) :: data = c_null_ptr, next = c_null_ptr, ia = c_null_ptr, ja = c_null_ptr
     integer(c_long_long) :: rows = 0, elements = 0, held = 0, row_length = 1
     integer(c_int) :: ghost_rows = 0
  end type Layout

contains

  subroutine XMPI_Register_vector(array, size, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: size, datatype, scheme
    integer, intent(out), optional :: ierror
    call finish(f_register(array%handle, KIND_VECTOR, int(size, c_long_long), 1_c_long_long, &
         0_c_int, 0_c_long_long, datatype=datatype, scheme=scheme), 'XMPI_Register_vector', ierror)
  end subroutine XMPI_Register_vector

  !> A size x size matrix by row blocks; viewed as p(size, rows): row r is p(:, r).
  subroutine XMPI_Register_dense(array, size, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: size, datatype, scheme
    integer, intent(out), optional :: ierror
    call finish(f_register(array%handle, KIND_DENSE, int(size, c_long_long), &
         int(size, c_long_long), 0_c_int, 0_c_long_long, datatype=datatype, scheme=scheme), &
         'XMPI_Register_dense', ierror)
  end subroutine XMPI_Register_dense

  !> `rows` rows of row_length elements with ghost_rows ghost rows before and
  !> after the block; viewed as p(row_length, 1-ghost_rows:count+ghost_rows).
  subroutine XMPI_Register_rows(array, rows, row_length, ghost_rows, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: rows, row_length, ghost_rows, datatype, scheme
    integer, intent(out), optional :: ierror
    call finish(f_register(array%handle, KIND_ROWS, int(rows, c_long_long), &
         int(row_length, c_long_long), ghost_rows, 0_c_long_long, datatype=datatype, &
         scheme=scheme), 'XMPI_Register_rows', ierror)
  end subroutine XMPI_Register_rows

  !> Two buffers of XMPI_Register_rows's layout, current and next, that the
  !> application swaps with XMPI_Array_swap; they move together.
  subroutine XMPI_Register_pair(pair, rows, row_length, ghost_rows, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: pair
    integer, intent(in) :: rows, row_length, ghost_rows, datatype, scheme
    integer, intent(out), optional :: ierror
    call finish(f_register(pair%handle, KIND_PAIR, int(rows, c_long_long), &
         int(row_length, c_long_long), ghost_rows, 0_c_long_long, datatype=datatype, &
         scheme=scheme), 'XMPI_Register_pair', ierror)
  end subroutine XMPI_Register_pair

  !> The time step's swap of a pair: current becomes next and next current
  !> (associate the pointers again).
  subroutine XMPI_Array_swap(pair, ierror)
    type(XMPI_Array), intent(in) :: pair
    integer, intent(out), optional :: ierror
    call finish(f_swap(pair%handle), 'XMPI_Array_swap', ierror)
  end subroutine XMPI_Array_swap

  !> Fills the ghost rows of the array (of a pair: its current buffer) from
  !> the processes that own those rows; blocking.
  subroutine XMPI_Halo_exchange(array, ierror)
    type(XMPI_Array), intent(in) :: array
    integer, intent(out), optional :: ierror
    call finish(f_halo(array%handle, HALO_EXCHANGE), 'XMPI_Halo_exchange', ierror)
  end subroutine XMPI_Halo_exchange

  !> Starts the halo exchange: read the buffer, do not write it, until XMPI_Halo_finish.
  subroutine XMPI_Halo_start(array, ierror)
    type(XMPI_Array), intent(in) :: array
    integer, intent(out), optional :: ierror
    call finish(f_halo(array%handle, HALO_START), 'XMPI_Halo_start', ierror)
  end subroutine XMPI_Halo_start

  subroutine XMPI_Halo_finish(array, ierror)
    type(XMPI_Array), intent(in) :: array
    integer, intent(out), optional :: ierror
    call finish(f_halo(array%handle, HALO_FINISH), 'XMPI_Halo_finish', ierror)
  end subroutine XMPI_Halo_finish

  !> A CSR matrix: ia, this block's count+1 row offsets from 0 (copied); ja
  !> (0-based global columns) and the values are then filled through
  !> XMPI_Sparse_indices and XMPI_Array_pointer.
  subroutine XMPI_Register_sparse(array, size, nnz, ia, datatype, scheme, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(in) :: size, nnz, ia(:), datatype, scheme
    integer, intent(out), optional :: ierror
    call finish(f_register(array%handle, KIND_SPARSE, int(size, c_long_long), 1_c_long_long, &
         0_c_int, int(nnz, c_long_long), ia, datatype, scheme), 'XMPI_Register_sparse', ierror)
  end subroutine XMPI_Register_sparse

  !> Stops following the array; its storage stays readable until XMPI_Array_free.
  subroutine XMPI_Unregister(array, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(out), optional :: ierror
    call finish(f_unregister(array%handle), 'XMPI_Unregister', ierror)
  end subroutine XMPI_Unregister

  !> Unregisters the array if it is registered and frees its storage.
  subroutine XMPI_Array_free(array, ierror)
    type(XMPI_Array), intent(inout) :: array
    integer, intent(out), optional :: ierror
    call finish(f_free(array%handle), 'XMPI_Array_free', ierror)
  end subroutine XMPI_Array_free

  !> A record of the application's own state, saved by every checkpoint.
  !> buffer must stay where it is while registered (a module or SAVEd variable).
  subroutine XMPI_Register_record(name, buffer, count, datatype, ierror)
    character(len=*), intent(in) :: name
    type(*), dimension(..), target, intent(in) :: buffer
    integer, intent(in) :: count, datatype
    integer, intent(out), optional :: ierror
    call finish(f_register_record(name, len(name), c_loc(buffer), int(count, c_long_long), &
         datatype), 'XMPI_Register_record', ierror)
  end subroutine XMPI_Register_record

  subroutine XMPI_Unregister_record(buffer, ierror)
    type(*), dimension(..), target, intent(in) :: buffer
    integer, intent(out), optional :: ierror
    call finish(c_unregister(c_loc(buffer)), 'XMPI_Unregister_record', ierror)
  end subroutine XMPI_Unregister_record

  ! Where the array's buffers are now; a kind of another size than the
  ! registered datatype's (bits 0: any), or a next buffer asked of an array
  ! that is not a pair, stops the program.
  function layout_of(array, bits, with_next, routine) result(at)
    type(XMPI_Array), intent(in) :: array
    integer, intent(in) :: bits
    logical, intent(in) :: with_next
    character(len=*), intent(in) :: routine
    type(Layout) :: at
    integer(c_long_long) :: element_bytes
    call finish(f_view(array%handle, at%data, at%next, at%ia, at%ja, at%rows, at%elements, &
         at%row_length, at%ghost_rows, element_bytes), routine)
    at%held = at%elements + 2 * at%ghost_rows * at%row_length
    if (bits /= 0 .and. bits /= 8 * element_bytes) then
       write (error_unit, '(3a,i0,a,i0,a)') 'flexmpi: ', routine, ': a pointer of ', bits / 8, &
            '-byte elements onto an array of ', element_bytes, '-byte elements'
       error stop 1
    end if
    if (with_next .and. .not. c_associated(at%next)) then
       write (error_unit, '(3a)') 'flexmpi: ', routine, &
            ': a next buffer of an array that is not a pair (XMPI_Register_pair)'
       error stop 1
    end if
  end function layout_of

  !> Rows of the array this process holds now (its block; all if replicated).
  integer function XMPI_Array_rows(array)
    type(XMPI_Array), intent(in) :: array
    type(Layout) :: at
    at = layout_of(array, 0, .false., 'XMPI_Array_rows')
    XMPI_Array_rows = int(at%rows)
  end function XMPI_Array_rows

  !> A sparse array's row offsets ia(count+1) and columns ja(nnz of the block),
  !> 0-based as in C: row r's nonzeros are ja(ia(r)+1 : ia(r+1)).
  subroutine XMPI_Sparse_indices(array, ia, ja)
    type(XMPI_Array), intent(in) :: array
    integer(c_int), pointer, intent(out) :: ia(:), ja(:)
    type(Layout) :: at
    at = layout_of(array, 0, .false., 'XMPI_Sparse_indices')
    call c_f_pointer(at%ia, ia, [at%rows + 1])
    call c_f_pointer(at%ja, ja, [at%elements])
  end subroutine XMPI_Sparse_indices

  ! XMPI_Array_pointer for each element type, ranks 1 and 2 (one template).
#define ELEMENT real(c_double)
#define POINTER_RANK_1 pointer_real64_1
#define POINTER_RANK_2 pointer_real64_2
#include "array_pointer.inc"
#undef ELEMENT
#undef POINTER_RANK_1
#undef POINTER_RANK_2
#define ELEMENT real(c_float)
#define POINTER_RANK_1 pointer_real32_1
#define POINTER_RANK_2 pointer_real32_2
#include "array_pointer.inc"
#undef ELEMENT
#undef POINTER_RANK_1
#undef POINTER_RANK_2
#define ELEMENT integer(c_int)
#define POINTER_RANK_1 pointer_int32_1
#define POINTER_RANK_2 pointer_int32_2
#include "array_pointer.inc"

end module flexmpi_arrays
