! flexmpi_base - the Fortran interface of flexmpi (docs/reference/api.md,
! "Fortran"), thin over the C API (include/flexmpi.h) through ISO_C_BINDING.
! Programs use it through the module `flexmpi` (use mpi / mpif.h: integer
! handles) or `flexmpi_f08` (use mpi_f08), which add XMPI_COMM_WORLD of the
! right kind; this module holds everything else, once.
!
! Every XMPI routine is a subroutine whose last argument is an optional
! `ierror`, as in MPI: present, it receives XMPI_SUCCESS or an XMPI_ERR_*
! code; absent, a failure prints the error and the detail on stderr and stops
! the program with `error stop` (the launcher then ends the job, as with
! MPI_ERRORS_ARE_FATAL).
!
! Registered arrays live in flexmpi-owned storage (Fortran cannot let C
! reallocate an allocatable): an XMPI_Register_* call allocates this process's
! block, zero-filled, and XMPI_Array_pointer associates a Fortran pointer
! with it. Rows are contiguous (C's row-major rows): in a rank-2 pointer
! p(row_length, rows) a row is a column p(:, r), and the distributed
! dimension is the last one; ghost rows are p(:, 1-ghost_rows:0) and
! p(:, count+1:count+ghost_rows). A call that may move data (XMPI_Eval_lbalance, XMPI_Eval_reconfig,
! XMPI_Redistribute_data, XMPI_Send_data, XMPI_Get_data, XMPI_Resume,
! XMPI_Spawn, XMPI_Remove) may change where the block is and its size: call
! XMPI_Array_pointer again after it.
module flexmpi_base
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  ! Return codes (flexmpi.h).
  integer, parameter, public :: XMPI_SUCCESS = 0, XMPI_ERR_ARG = -1, XMPI_ERR_STATE = -2, &
       XMPI_ERR_UNSUPPORTED = -3, XMPI_ERR_EVENT = -4, XMPI_ERR_MPI = -5, XMPI_ERR_NOMEM = -6, &
       XMPI_ERR_CONFIG = -7, XMPI_ERR_INTERNAL = -8, XMPI_ERR_IO = -9
  ! Data distribution schemes, process status, workload models.
  integer, parameter, public :: XMPI_DISTRIBUTED = 0, XMPI_REPLICATED = 1, &
       XMPI_DISTRIBUTED_IN_PLACE = 2
  integer, parameter, public :: XMPI_RUNNING = 0, XMPI_NEWLY_SPAWNED = 1, XMPI_REMOVED = 2
  integer, parameter, public :: XMPI_LB_COUNT = 0, XMPI_LB_NNZ = 1, XMPI_LB_WEIGHT = 2
  integer, parameter, public :: XMPI_CHECKPOINTED_EXIT_STATUS = 75
  character(len=*), parameter, public :: XMPI_INFO_BATCH = 'flexmpi_batch'

  ! A registered vector, dense matrix, CSR matrix, rows with ghost rows or
  ! swapped pair of them, in flexmpi-owned storage.
  type, public :: XMPI_Array
     private
     type(c_ptr) :: handle = c_null_ptr
  end type XMPI_Array

  public :: XMPI_Error_string, XMPI_Last_error_message
  public :: XMPI_Monitor_iter_begin, XMPI_Monitor_iter_end, XMPI_Monitor_si_init, XMPI_Set_work
  public :: XMPI_Get_monitor_totals, XMPI_Get_wsize, XMPI_Get_decomposition
  public :: XMPI_Get_process_status
  public :: XMPI_Register_vector, XMPI_Register_dense, XMPI_Register_sparse
  public :: XMPI_Register_rows, XMPI_Register_pair
  public :: XMPI_Register_record, XMPI_Unregister, XMPI_Unregister_record, XMPI_Array_free
  public :: XMPI_Array_pointer, XMPI_Sparse_indices, XMPI_Array_rows, XMPI_Array_swap
  public :: XMPI_Redistribute_data, XMPI_Get_blocks_changed
  public :: XMPI_Halo_exchange, XMPI_Halo_start, XMPI_Halo_finish
  public :: XMPI_Eval_lbalance, XMPI_Eval_reconfig
  public :: XMPI_Spawn, XMPI_Remove, XMPI_Get_data, XMPI_Send_data
  public :: XMPI_Resume, XMPI_Checkpoint

  ! A Fortran pointer onto a registered array's block: rank 1 (all local
  ! elements) or rank 2 (row_length x rows: a dense matrix's row r is p(:, r)),
  ! with the ghost rows around the block (rank 1: elements 1-ghost_rows*row_length
  ! to 0 and after the block's); of a pair, the current buffer, and the next
  ! one in the optional third argument.
  interface XMPI_Array_pointer
     module procedure pointer_real64_1, pointer_real64_2, pointer_real32_1, pointer_real32_2, &
          pointer_int32_1, pointer_int32_2
  end interface XMPI_Array_pointer

  ! The C API functions Fortran can call as they are.
  interface
     function c_error_string(code) bind(C, name='XMPI_Error_string')
       import :: c_int, c_ptr
       integer(c_int), value :: code
       type(c_ptr) :: c_error_string
     end function c_error_string
     function c_last_error_message() bind(C, name='XMPI_Last_error_message')
       import :: c_ptr
       type(c_ptr) :: c_last_error_message
     end function c_last_error_message
     function c_strlen(string) bind(C, name='strlen')
       import :: c_ptr, c_size_t
       type(c_ptr), value :: string
       integer(c_size_t) :: c_strlen
     end function c_strlen
     function c_monitor_iter_end(counts) bind(C, name='XMPI_Monitor_iter_end')
       import :: c_int, c_long_long
       integer(c_long_long), optional :: counts(*)
       integer(c_int) :: c_monitor_iter_end
     end function c_monitor_iter_end
     function c_monitor_si_init() bind(C, name='XMPI_Monitor_si_init')
       import :: c_int
       integer(c_int) :: c_monitor_si_init
     end function c_monitor_si_init
     function c_set_work(work_units) bind(C, name='XMPI_Set_work')
       import :: c_int, c_double
       real(c_double), value :: work_units
       integer(c_int) :: c_set_work
     end function c_set_work
     function c_get_monitor_totals(iterations, wall, cpu, mpi, computation) &
          bind(C, name='XMPI_Get_monitor_totals')
       import :: c_int, c_long_long, c_double
       integer(c_long_long), optional :: iterations
       real(c_double), optional :: wall, cpu, mpi, computation
       integer(c_int) :: c_get_monitor_totals
     end function c_get_monitor_totals
     function c_get_wsize(rank, nprocs, dsize, count, displ) bind(C, name='XMPI_Get_wsize')
       import :: c_int
       integer(c_int), value :: rank, nprocs, dsize
       integer(c_int) :: count, displ
       integer(c_int) :: c_get_wsize
     end function c_get_wsize
     function c_get_decomposition(nprocs, dsize, counts, displs) &
          bind(C, name='XMPI_Get_decomposition')
       import :: c_int
       integer(c_int), value :: nprocs, dsize
       integer(c_int) :: counts(*), displs(*)
       integer(c_int) :: c_get_decomposition
     end function c_get_decomposition
     function c_get_process_status() bind(C, name='XMPI_Get_process_status')
       import :: c_int
       integer(c_int) :: c_get_process_status
     end function c_get_process_status
     function c_unregister(address) bind(C, name='XMPI_Unregister')
       import :: c_int, c_ptr
       type(c_ptr), value :: address
       integer(c_int) :: c_unregister
     end function c_unregister
     function c_redistribute_data(scount, sdispl, rcount, rdispl) &
          bind(C, name='XMPI_Redistribute_data')
       import :: c_int
       integer(c_int), value :: scount, sdispl, rcount, rdispl
       integer(c_int) :: c_redistribute_data
     end function c_redistribute_data
     function c_get_blocks_changed(changed) bind(C, name='XMPI_Get_blocks_changed')
       import :: c_int
       integer(c_int) :: changed
       integer(c_int) :: c_get_blocks_changed
     end function c_get_blocks_changed
     function c_eval_lbalance(rank, nprocs, it, maxit, count, displ, weight) &
          bind(C, name='XMPI_Eval_lbalance')
       import :: c_int, c_double
       integer(c_int), value :: rank, nprocs, it, maxit
       integer(c_int) :: count, displ
       real(c_double), optional :: weight(*)
       integer(c_int) :: c_eval_lbalance
     end function c_eval_lbalance
     function c_get_data(it) bind(C, name='XMPI_Get_data')
       import :: c_int
       integer(c_int) :: it
       integer(c_int) :: c_get_data
     end function c_get_data
     function c_send_data(it, count, displ) bind(C, name='XMPI_Send_data')
       import :: c_int
       integer(c_int), value :: it
       integer(c_int) :: count, displ
       integer(c_int) :: c_send_data
     end function c_send_data
     function c_resume(it) bind(C, name='XMPI_Resume')
       import :: c_int
       integer(c_int) :: it
       integer(c_int) :: c_resume
     end function c_resume
     function c_checkpoint(next_it) bind(C, name='XMPI_Checkpoint')
       import :: c_int
       integer(c_int), value :: next_it
       integer(c_int) :: c_checkpoint
     end function c_checkpoint
  end interface

  ! The shim (src/capi/flexmpi_fortran.cpp): handles, strings, storage.
  interface
     function f_register(handle, kind, size, row_length, ghost_rows, nnz, ia, datatype, scheme) &
          bind(C, name='flexmpi_f_register')
       import :: c_int, c_long_long, c_ptr
       type(c_ptr) :: handle
       integer(c_int), value :: kind, ghost_rows, datatype, scheme
       integer(c_long_long), value :: size, row_length, nnz
       integer(c_int), optional :: ia(*)
       integer(c_int) :: f_register
     end function f_register
     function f_view(handle, data, next, ia, ja, rows, elements, row_length, ghost_rows, &
          element_bytes) bind(C, name='flexmpi_f_view')
       import :: c_int, c_long_long, c_ptr
       type(c_ptr), value :: handle
       type(c_ptr) :: data, next, ia, ja
       integer(c_long_long) :: rows, elements, row_length, element_bytes
       integer(c_int) :: ghost_rows
       integer(c_int) :: f_view
     end function f_view
     function f_swap(handle) bind(C, name='flexmpi_f_swap')
       import :: c_int, c_ptr
       type(c_ptr), value :: handle
       integer(c_int) :: f_swap
     end function f_swap
     function f_halo(handle, operation) bind(C, name='flexmpi_f_halo')
       import :: c_int, c_ptr
       type(c_ptr), value :: handle
       integer(c_int), value :: operation
       integer(c_int) :: f_halo
     end function f_halo
     function f_unregister(handle) bind(C, name='flexmpi_f_unregister')
       import :: c_int, c_ptr
       type(c_ptr), value :: handle
       integer(c_int) :: f_unregister
     end function f_unregister
     function f_free(handle) bind(C, name='flexmpi_f_free')
       import :: c_int, c_ptr
       type(c_ptr) :: handle
       integer(c_int) :: f_free
     end function f_free
     function f_register_record(name, name_length, buffer, count, datatype) &
          bind(C, name='flexmpi_f_register_record')
       import :: c_int, c_long_long, c_char, c_ptr
       character(kind=c_char) :: name(*)
       integer(c_int), value :: name_length, datatype
       type(c_ptr), value :: buffer
       integer(c_long_long), value :: count
       integer(c_int) :: f_register_record
     end function f_register_record
     function f_monitor_iter_begin(events, count, length) &
          bind(C, name='flexmpi_f_monitor_iter_begin')
       import :: c_int, c_char
       character(kind=c_char) :: events(*)
       integer(c_int), value :: count, length
       integer(c_int) :: f_monitor_iter_begin
     end function f_monitor_iter_begin
     function f_eval_reconfig(rank, nprocs, it, maxit, count, displ, weight, argv, argc, &
          argv_length, command, command_length) bind(C, name='flexmpi_f_eval_reconfig')
       import :: c_int, c_double, c_char
       integer(c_int), value :: rank, nprocs, it, maxit, argc, argv_length, command_length
       integer(c_int) :: count, displ
       real(c_double), optional :: weight(*)
       character(kind=c_char) :: argv(*), command(*)
       integer(c_int) :: f_eval_reconfig
     end function f_eval_reconfig
     function f_spawn(command, command_length, argv, argc, argv_length, nprocs, info, &
          node_class, classes, class_length) bind(C, name='flexmpi_f_spawn')
       import :: c_int, c_char
       character(kind=c_char) :: command(*), argv(*), node_class(*)
       integer(c_int), value :: command_length, argc, argv_length, nprocs, classes, class_length
       integer(c_int), optional :: info
       integer(c_int) :: f_spawn
     end function f_spawn
     function f_remove(nprocs, node_class, classes, class_length) bind(C, name='flexmpi_f_remove')
       import :: c_int, c_char
       integer(c_int), value :: nprocs, classes, class_length
       character(kind=c_char) :: node_class(*)
       integer(c_int) :: f_remove
     end function f_remove
  end interface

  integer(c_int), parameter :: KIND_VECTOR = 0, KIND_DENSE = 1, KIND_SPARSE = 2, KIND_ROWS = 3, &
       KIND_PAIR = 4
  integer(c_int), parameter :: HALO_EXCHANGE = 0, HALO_START = 1, HALO_FINISH = 2

  ! Where a registered array's buffers are and how they are laid out
  ! (flexmpi_f_view): `elements` of the block (a sparse matrix's nonzeros),
  ! `held` with the ghost rows, which start the buffer.
  type :: Layout
     type(c_ptr) :: data = c_null_ptr, next = c_null_ptr, ia = c_null_ptr, ja = c_null_ptr
     integer(c_long_long) :: rows = 0, elements = 0, held = 0, row_length = 1
     integer(c_int) :: ghost_rows = 0
  end type Layout

contains

  ! ---- errors --------------------------------------------------------------

  function fortran_string(string) result(text)
    type(c_ptr), intent(in) :: string
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: k
    allocate(character(len=int(c_strlen(string))) :: text)
    call c_f_pointer(string, chars, [len(text)])
    do k = 1, len(text)
       text(k:k) = chars(k)
    end do
  end function fortran_string

  !> A static, human-readable explanation of a return code.
  function XMPI_Error_string(code) result(text)
    integer, intent(in) :: code
    character(len=:), allocatable :: text
    text = fortran_string(c_error_string(code))
  end function XMPI_Error_string

  !> Detail of the last failed call on this thread ('' if none).
  function XMPI_Last_error_message() result(text)
    character(len=:), allocatable :: text
    text = fortran_string(c_last_error_message())
  end function XMPI_Last_error_message

  ! Every routine ends here: the code to ierror, or a failure reported and fatal.
  subroutine finish(code, routine, ierror)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: routine
    integer, intent(out), optional :: ierror
    if (present(ierror)) then
       ierror = code
    else if (code /= XMPI_SUCCESS) then
       write (error_unit, '(5a)') 'flexmpi: ', routine, ' failed: ', XMPI_Error_string(code), &
            ' (' // XMPI_Last_error_message() // ')'
       error stop 1
    end if
  end subroutine finish

  ! A string list for the shim: present, its strings; absent, count -1.
  subroutine string_list(list, chars, count, length)
    character(len=*), intent(in), optional :: list(:)
    character(kind=c_char, len=:), allocatable, intent(out) :: chars
    integer(c_int), intent(out) :: count, length
    integer :: k
    count = -1
    length = 0
    if (.not. present(list)) then
       chars = ' '
       return
    end if
    count = size(list)
    length = len(list)
    allocate(character(kind=c_char, len=max(1, count * length)) :: chars)
    do k = 1, count
       chars((k - 1) * length + 1:k * length) = list(k)
    end do
  end subroutine string_list

  ! An optional string for the shim: its characters and length, or length -1.
  subroutine optional_string(text, chars, length)
    character(len=*), intent(in), optional :: text
    character(kind=c_char, len=:), allocatable, intent(out) :: chars
    integer(c_int), intent(out) :: length
    chars = ' '
    length = -1
    if (.not. present(text)) return
    chars = text // ' '
    length = len(text)
  end subroutine optional_string

  ! ---- monitoring (thesis 4.2) -----------------------------------------------

  !> Starts monitoring an iteration; events: PAPI event names or 'WORK'.
  subroutine XMPI_Monitor_iter_begin(events, ierror)
    character(len=*), intent(in), optional :: events(:)
    integer, intent(out), optional :: ierror
    character(kind=c_char, len=:), allocatable :: chars
    integer(c_int) :: count, length
    call string_list(events, chars, count, length)
    call finish(f_monitor_iter_begin(chars, count, length), 'XMPI_Monitor_iter_begin', ierror)
  end subroutine XMPI_Monitor_iter_begin

  !> Ends the open iteration; counts receives one value per event.
  subroutine XMPI_Monitor_iter_end(counts, ierror)
    integer(c_long_long), intent(out), optional :: counts(:)
    integer, intent(out), optional :: ierror
    integer(c_long_long), allocatable :: values(:)
    if (present(counts)) then
       allocate(values(size(counts)))
       call finish(c_monitor_iter_end(values), 'XMPI_Monitor_iter_end', ierror)
       counts = values
    else
       call finish(c_monitor_iter_end(), 'XMPI_Monitor_iter_end', ierror)
    end if
  end subroutine XMPI_Monitor_iter_end

  subroutine XMPI_Monitor_si_init(ierror)
    integer, intent(out), optional :: ierror
    call finish(c_monitor_si_init(), 'XMPI_Monitor_si_init', ierror)
  end subroutine XMPI_Monitor_si_init

  subroutine XMPI_Set_work(work_units, ierror)
    real(c_double), intent(in) :: work_units
    integer, intent(out), optional :: ierror
    call finish(c_set_work(work_units), 'XMPI_Set_work', ierror)
  end subroutine XMPI_Set_work

  subroutine XMPI_Get_monitor_totals(iterations, wall, cpu, mpi, computation, ierror)
    integer(c_long_long), intent(out), optional :: iterations
    real(c_double), intent(out), optional :: wall, cpu, mpi, computation
    integer, intent(out), optional :: ierror
    call finish(c_get_monitor_totals(iterations, wall, cpu, mpi, computation), &
         'XMPI_Get_monitor_totals', ierror)
  end subroutine XMPI_Get_monitor_totals

  ! ---- decomposition (thesis 4.5) --------------------------------------------

  !> The block of `rank` among nprocs: count rows from row displ (0-based).
  subroutine XMPI_Get_wsize(rank, nprocs, dsize, count, displ, ierror)
    integer, intent(in) :: rank, nprocs, dsize
    integer, intent(out) :: count, displ
    integer, intent(out), optional :: ierror
    call finish(c_get_wsize(rank, nprocs, dsize, count, displ), 'XMPI_Get_wsize', ierror)
  end subroutine XMPI_Get_wsize

  !> Every block: counts(p+1) rows from displs(p+1) for rank p.
  subroutine XMPI_Get_decomposition(nprocs, dsize, counts, displs, ierror)
    integer, intent(in) :: nprocs, dsize
    integer, intent(out) :: counts(:), displs(:)
    integer, intent(out), optional :: ierror
    integer(c_int) :: code
    code = XMPI_ERR_ARG
    if (size(counts) >= nprocs .and. size(displs) >= nprocs) then
       code = c_get_decomposition(nprocs, dsize, counts, displs)
    end if
    call finish(code, 'XMPI_Get_decomposition', ierror)
  end subroutine XMPI_Get_decomposition

  !> XMPI_RUNNING, XMPI_NEWLY_SPAWNED or XMPI_REMOVED.
  integer function XMPI_Get_process_status()
    XMPI_Get_process_status = c_get_process_status()
  end function XMPI_Get_process_status

  ! ---- registered arrays (thesis 4.5) ----------------------------------------

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

  subroutine pointer_real64_1(array, p, next)
    type(XMPI_Array), intent(in) :: array
    real(c_double), pointer, intent(out) :: p(:)
    real(c_double), pointer, intent(out), optional :: next(:)
    real(c_double), pointer :: whole(:)
    type(Layout) :: at
    at = layout_of(array, storage_size(p), present(next), 'XMPI_Array_pointer')
    call c_f_pointer(at%data, whole, [at%held])
    p(1 - at%ghost_rows * at%row_length:) => whole
    if (.not. present(next)) return
    call c_f_pointer(at%next, whole, [at%held])
    next(1 - at%ghost_rows * at%row_length:) => whole
  end subroutine pointer_real64_1

  subroutine pointer_real64_2(array, p, next)
    type(XMPI_Array), intent(in) :: array
    real(c_double), pointer, intent(out) :: p(:, :)
    real(c_double), pointer, intent(out), optional :: next(:, :)
    real(c_double), pointer :: whole(:, :)
    type(Layout) :: at
    at = layout_of(array, storage_size(p), present(next), 'XMPI_Array_pointer')
    call c_f_pointer(at%data, whole, [at%row_length, at%rows + 2 * at%ghost_rows])
    p(1:, 1 - at%ghost_rows:) => whole
    if (.not. present(next)) return
    call c_f_pointer(at%next, whole, [at%row_length, at%rows + 2 * at%ghost_rows])
    next(1:, 1 - at%ghost_rows:) => whole
  end subroutine pointer_real64_2

  subroutine pointer_real32_1(array, p, next)
    type(XMPI_Array), intent(in) :: array
    real(c_float), pointer, intent(out) :: p(:)
    real(c_float), pointer, intent(out), optional :: next(:)
    real(c_float), pointer :: whole(:)
    type(Layout) :: at
    at = layout_of(array, storage_size(p), present(next), 'XMPI_Array_pointer')
    call c_f_pointer(at%data, whole, [at%held])
    p(1 - at%ghost_rows * at%row_length:) => whole
    if (.not. present(next)) return
    call c_f_pointer(at%next, whole, [at%held])
    next(1 - at%ghost_rows * at%row_length:) => whole
  end subroutine pointer_real32_1

  subroutine pointer_real32_2(array, p, next)
    type(XMPI_Array), intent(in) :: array
    real(c_float), pointer, intent(out) :: p(:, :)
    real(c_float), pointer, intent(out), optional :: next(:, :)
    real(c_float), pointer :: whole(:, :)
    type(Layout) :: at
    at = layout_of(array, storage_size(p), present(next), 'XMPI_Array_pointer')
    call c_f_pointer(at%data, whole, [at%row_length, at%rows + 2 * at%ghost_rows])
    p(1:, 1 - at%ghost_rows:) => whole
    if (.not. present(next)) return
    call c_f_pointer(at%next, whole, [at%row_length, at%rows + 2 * at%ghost_rows])
    next(1:, 1 - at%ghost_rows:) => whole
  end subroutine pointer_real32_2

  subroutine pointer_int32_1(array, p, next)
    type(XMPI_Array), intent(in) :: array
    integer(c_int), pointer, intent(out) :: p(:)
    integer(c_int), pointer, intent(out), optional :: next(:)
    integer(c_int), pointer :: whole(:)
    type(Layout) :: at
    at = layout_of(array, storage_size(p), present(next), 'XMPI_Array_pointer')
    call c_f_pointer(at%data, whole, [at%held])
    p(1 - at%ghost_rows * at%row_length:) => whole
    if (.not. present(next)) return
    call c_f_pointer(at%next, whole, [at%held])
    next(1 - at%ghost_rows * at%row_length:) => whole
  end subroutine pointer_int32_1

  subroutine pointer_int32_2(array, p, next)
    type(XMPI_Array), intent(in) :: array
    integer(c_int), pointer, intent(out) :: p(:, :)
    integer(c_int), pointer, intent(out), optional :: next(:, :)
    integer(c_int), pointer :: whole(:, :)
    type(Layout) :: at
    at = layout_of(array, storage_size(p), present(next), 'XMPI_Array_pointer')
    call c_f_pointer(at%data, whole, [at%row_length, at%rows + 2 * at%ghost_rows])
    p(1:, 1 - at%ghost_rows:) => whole
    if (.not. present(next)) return
    call c_f_pointer(at%next, whole, [at%row_length, at%rows + 2 * at%ghost_rows])
    next(1:, 1 - at%ghost_rows:) => whole
  end subroutine pointer_int32_2

  ! ---- redistribution, load balancing, malleability ----------------------------

  subroutine XMPI_Redistribute_data(scount, sdispl, rcount, rdispl, ierror)
    integer, intent(in) :: scount, sdispl, rcount, rdispl
    integer, intent(out), optional :: ierror
    call finish(c_redistribute_data(scount, sdispl, rcount, rdispl), 'XMPI_Redistribute_data', &
         ierror)
  end subroutine XMPI_Redistribute_data

  subroutine XMPI_Get_blocks_changed(changed, ierror)
    logical, intent(out) :: changed
    integer, intent(out), optional :: ierror
    integer(c_int) :: flag
    flag = 0
    call finish(c_get_blocks_changed(flag), 'XMPI_Get_blocks_changed', ierror)
    changed = flag /= 0
  end subroutine XMPI_Get_blocks_changed

  !> The load-balancing point (it: 0-based iteration just completed).
  subroutine XMPI_Eval_lbalance(rank, nprocs, it, maxit, count, displ, weight, ierror)
    integer, intent(in) :: rank, nprocs, it, maxit
    integer, intent(inout) :: count, displ
    real(c_double), intent(in), optional :: weight(:)
    integer, intent(out), optional :: ierror
    call finish(c_eval_lbalance(rank, nprocs, it, maxit, count, displ, weight), &
         'XMPI_Eval_lbalance', ierror)
  end subroutine XMPI_Eval_lbalance

  !> The adaptation point: balancing and the malleability policy's spawns and removals.
  subroutine XMPI_Eval_reconfig(rank, nprocs, it, maxit, count, displ, weight, argv, command, &
       ierror)
    integer, intent(in) :: rank, nprocs, it, maxit
    integer, intent(inout) :: count, displ
    real(c_double), intent(in), optional :: weight(:)
    character(len=*), intent(in), optional :: argv(:), command
    integer, intent(out), optional :: ierror
    character(kind=c_char, len=:), allocatable :: arguments, program
    integer(c_int) :: argc, argv_length, command_length, code
    call string_list(argv, arguments, argc, argv_length)
    call optional_string(command, program, command_length)
    code = f_eval_reconfig(rank, nprocs, it, maxit, count, displ, weight, arguments, argc, &
         argv_length, program, command_length)
    call finish(code, 'XMPI_Eval_reconfig', ierror)
  end subroutine XMPI_Eval_reconfig

  !> Spawns nprocs processes of command (absent: this program) with argv.
  subroutine XMPI_Spawn(command, argv, nprocs, info, node_class, ierror)
    character(len=*), intent(in), optional :: command, argv(:), node_class(:)
    integer, intent(in) :: nprocs
    integer, intent(in), optional :: info
    integer, intent(out), optional :: ierror
    character(kind=c_char, len=:), allocatable :: program, arguments, classes
    integer(c_int) :: command_length, argc, argv_length, class_count, class_length
    call optional_string(command, program, command_length)
    call string_list(argv, arguments, argc, argv_length)
    call string_list(node_class, classes, class_count, class_length)
    call finish(f_spawn(program, command_length, arguments, argc, argv_length, nprocs, info, &
         classes, class_count, class_length), 'XMPI_Spawn', ierror)
  end subroutine XMPI_Spawn

  subroutine XMPI_Remove(nprocs, node_class, ierror)
    integer, intent(in) :: nprocs
    character(len=*), intent(in), optional :: node_class(:)
    integer, intent(out), optional :: ierror
    character(kind=c_char, len=:), allocatable :: classes
    integer(c_int) :: class_count, class_length
    call string_list(node_class, classes, class_count, class_length)
    call finish(f_remove(nprocs, classes, class_count, class_length), 'XMPI_Remove', ierror)
  end subroutine XMPI_Remove

  subroutine XMPI_Get_data(it, ierror)
    integer, intent(out) :: it
    integer, intent(out), optional :: ierror
    call finish(c_get_data(it), 'XMPI_Get_data', ierror)
  end subroutine XMPI_Get_data

  subroutine XMPI_Send_data(it, count, displ, ierror)
    integer, intent(in) :: it
    integer, intent(out) :: count, displ
    integer, intent(out), optional :: ierror
    call finish(c_send_data(it, count, displ), 'XMPI_Send_data', ierror)
  end subroutine XMPI_Send_data

  ! ---- checkpoint and restart ------------------------------------------------

  !> The iteration the loop starts from (a restart, a spawned process, or 0).
  subroutine XMPI_Resume(it, ierror)
    integer, intent(out) :: it
    integer, intent(out), optional :: ierror
    call finish(c_resume(it), 'XMPI_Resume', ierror)
  end subroutine XMPI_Resume

  subroutine XMPI_Checkpoint(next_it, ierror)
    integer, intent(in) :: next_it
    integer, intent(out), optional :: ierror
    call finish(c_checkpoint(next_it), 'XMPI_Checkpoint', ierror)
  end subroutine XMPI_Checkpoint

end module flexmpi_base
