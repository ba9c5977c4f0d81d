! flexmpi_base - the Fortran interface of flexmpi (docs/reference/api.md,
! "Fortran"), thin over the C API (include/flexmpi.h) through ISO_C_BINDING.
! Programs use it through the module `flexmpi` (use mpi / mpif.h: integer
! handles) or `flexmpi_f08` (use mpi_f08), which add XMPI_COMM_WORLD of the
! right kind; this module holds everything else, once (the registered arrays
! in flexmpi_arrays, the C functions and error handling in flexmpi_binding).
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
  use flexmpi_binding
  use flexmpi_arrays
  implicit none
  private

  public :: XMPI_SUCCESS, XMPI_ERR_ARG, XMPI_ERR_STATE, XMPI_ERR_UNSUPPORTED, XMPI_ERR_EVENT, &
       XMPI_ERR_MPI, XMPI_ERR_NOMEM, XMPI_ERR_CONFIG, XMPI_ERR_INTERNAL, XMPI_ERR_IO
  public :: XMPI_DISTRIBUTED, XMPI_REPLICATED, XMPI_DISTRIBUTED_IN_PLACE
  public :: XMPI_RUNNING, XMPI_NEWLY_SPAWNED, XMPI_REMOVED
  public :: XMPI_LB_COUNT, XMPI_LB_NNZ, XMPI_LB_WEIGHT
  public :: XMPI_CHECKPOINTED_EXIT_STATUS, XMPI_INFO_BATCH
  public :: XMPI_Error_string, XMPI_Last_error_message
  public :: XMPI_Array
  public :: XMPI_Register_vector, XMPI_Register_dense, XMPI_Register_sparse
  public :: XMPI_Register_rows, XMPI_Register_pair
  public :: XMPI_Register_record, XMPI_Unregister, XMPI_Unregister_record, XMPI_Array_free
  public :: XMPI_Array_pointer, XMPI_Sparse_indices, XMPI_Array_rows, XMPI_Array_swap
  public :: XMPI_Halo_exchange, XMPI_Halo_start, XMPI_Halo_finish
  public :: XMPI_Monitor_iter_begin, XMPI_Monitor_iter_end, XMPI_Monitor_si_init, XMPI_Set_work
  public :: XMPI_Get_monitor_totals, XMPI_Get_wsize, XMPI_Get_decomposition
  public :: XMPI_Get_process_status
  public :: XMPI_Redistribute_data, XMPI_Get_blocks_changed
  public :: XMPI_Eval_lbalance, XMPI_Eval_reconfig
  public :: XMPI_Spawn, XMPI_Remove, XMPI_Get_data, XMPI_Send_data
  public :: XMPI_Resume, XMPI_Checkpoint

contains

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
