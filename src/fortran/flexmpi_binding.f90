! flexmpi_binding - what the Fortran modules of flexmpi share and a program
! does not call itself: the return codes and constants of include/flexmpi.h,
! the C functions the modules call (the C API as it is, and its Fortran shim,
! src/capi/flexmpi_fortran.cpp), and the error handling every routine ends
! with. flexmpi_base re-exports what a program uses.
module flexmpi_binding
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  public

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

end module flexmpi_binding
