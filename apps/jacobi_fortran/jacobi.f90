! flexmpi-jacobi-fortran - the dense Jacobi solver of the FLEX-MPI benchmark
! suite (thesis 6.1.1.1, Algorithm 9) in Fortran, on the flexmpi_f08 module:
! the same system, the same arithmetic in the same order and the same summary
! line as apps/jacobi/jacobi.c, so both print the same checksum for the same
! arguments on any number of processes.
!
! A is distributed by row blocks (a(:, r) is local row r), b and the diagonal
! too, x is replicated and refreshed every iteration with MPI_Allgatherv on
! XMPI_COMM_WORLD. All four live in flexmpi-owned storage (XMPI_Array) and
! are viewed through Fortran pointers, associated again after every call that
! may move rows (XMPI_Eval_reconfig, XMPI_Resume).
program jacobi_fortran
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_null_char, c_double
  use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit, output_unit
  use mpi_f08
  use flexmpi_f08
  implicit none

  character(len=*), parameter :: PROGRAM_NAME = 'flexmpi-jacobi-fortran'
  integer, parameter :: MAX_SIZE = 1000000

  type :: Options
     integer :: size = 2000, iterations = 500, seed = 1
     character(len=:), allocatable :: sampling_interval, trace
     logical :: quiet = .false., static_mode = .false., help = .false.
     character(len=:), allocatable :: error
  end type Options

  interface
     ! POSIX setenv: flexmpi reads its FLEXMPI_* settings in MPI_Init.
     function c_setenv(name, value, overwrite) bind(C, name='setenv')
       import :: c_char, c_int
       character(kind=c_char) :: name(*), value(*)
       integer(c_int), value :: overwrite
       integer(c_int) :: c_setenv
     end function c_setenv
  end interface

  type(Options) :: opts
  type(XMPI_Array) :: a_array, b_array, diagonal_array, x_array
  real(real64), pointer :: a(:, :), b(:), diagonal(:), x(:)
  real(real64), allocatable :: x_local(:)
  integer, allocatable :: counts(:), displs(:)
  integer :: rank, nprocs, n, count, first, it, row, first_iteration, old_nprocs
  logical :: newcomer, removed
  real(real64) :: loop_start, loop_time, norms(2), checksum

  opts = parse_options()
  if (opts%help .or. len(opts%error) > 0) then
     if (opts%help) call usage()
     if (.not. opts%help) write (error_unit, '(a)') PROGRAM_NAME // ': ' // opts%error
     if (.not. opts%help) error stop 2
     stop
  end if
  if (allocated(opts%sampling_interval)) call set_env('FLEXMPI_SAMPLING_INTERVAL', &
       opts%sampling_interval)
  if (allocated(opts%trace)) call set_env('FLEXMPI_TRACE', opts%trace)
  if (opts%static_mode) call set_env('FLEXMPI_POLICY', 'none')

  call MPI_Init()
  call MPI_Comm_rank(XMPI_COMM_WORLD, rank)
  call MPI_Comm_size(XMPI_COMM_WORLD, nprocs)
  newcomer = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED
  n = opts%size

  ! The structures that follow the partition (thesis Fig. 5.14): A, b and the
  ! diagonal by row blocks, x replicated; registration gives each its storage.
  call XMPI_Register_dense(a_array, n, MPI_DOUBLE_PRECISION, XMPI_DISTRIBUTED)
  call XMPI_Register_vector(b_array, n, MPI_DOUBLE_PRECISION, XMPI_DISTRIBUTED)
  call XMPI_Register_vector(diagonal_array, n, MPI_DOUBLE_PRECISION, XMPI_DISTRIBUTED)
  call XMPI_Register_vector(x_array, n, MPI_DOUBLE_PRECISION, XMPI_REPLICATED)
  allocate(counts(nprocs), displs(nprocs))
  call XMPI_Get_decomposition(nprocs, n, counts, displs)
  count = counts(rank + 1)
  first = displs(rank + 1)
  call associate_arrays()
  if (.not. newcomer) call generate_rows(int(opts%seed, int64), n, first, count, a, b, diagonal)
  x = 0  ! Alg. 9 line 1

  ! Where the loop starts: 0; in a spawned process, where the others are, with
  ! its rows; after a restart (FLEXMPI_RESTART), after the checkpointed one.
  call XMPI_Resume(first_iteration)
  if (newcomer) then
     call XMPI_Get_decomposition(nprocs, n, counts, displs)
     count = counts(rank + 1)
     first = displs(rank + 1)
  end if
  call associate_arrays()
  allocate(x_local(count))

  removed = .false.
  if (.not. newcomer) call MPI_Barrier(XMPI_COMM_WORLD)  ! the others are in their loop already
  loop_start = MPI_Wtime()
  do it = first_iteration, opts%iterations - 1
     call XMPI_Monitor_iter_begin()
     call sweep(n, first, count, a, b, diagonal, x, x_local)
     ! Alg. 9 line 10 (x_old = x_new), distributed: every process gets all of x.
     call MPI_Allgatherv(x_local, count, MPI_DOUBLE_PRECISION, x, counts, displs, &
          MPI_DOUBLE_PRECISION, XMPI_COMM_WORLD)
     call XMPI_Monitor_iter_end()
     ! End of a sampling interval: the policy may give this process another
     ! block (thesis Alg. 5) or spawn or remove processes (thesis 5.4); the
     ! registered arrays have then moved.
     call XMPI_Eval_reconfig(rank, nprocs, it, opts%iterations, count, first)
     if (XMPI_Get_process_status() == XMPI_REMOVED) then
        removed = .true.
        exit
     end if
     old_nprocs = nprocs
     call MPI_Comm_rank(XMPI_COMM_WORLD, rank)
     call MPI_Comm_size(XMPI_COMM_WORLD, nprocs)
     if (nprocs /= old_nprocs) then
        deallocate(counts, displs)
        allocate(counts(nprocs), displs(nprocs))
     end if
     ! Every block, for MPI_Allgatherv: another process's may have changed.
     call XMPI_Get_decomposition(nprocs, n, counts, displs)
     call associate_arrays()
     if (size(x_local) /= count) then
        deallocate(x_local)
        allocate(x_local(count))
     end if
  end do
  loop_time = MPI_Wtime() - loop_start

  if (.not. removed) then
     call residual_norms(n, first, count, a, b, x, norms)
     call MPI_Allreduce(MPI_IN_PLACE, norms, 2, MPI_DOUBLE_PRECISION, MPI_MAX, XMPI_COMM_WORLD)
     call MPI_Allreduce(MPI_IN_PLACE, loop_time, 1, MPI_DOUBLE_PRECISION, MPI_MAX, &
          XMPI_COMM_WORLD)
     if (rank == 0) then
        checksum = 0
        do row = 1, n
           checksum = checksum + x(row)
        end do
        call report(norms, checksum, loop_time)
     end if
  end if
  call XMPI_Array_free(a_array)
  call XMPI_Array_free(b_array)
  call XMPI_Array_free(diagonal_array)
  call XMPI_Array_free(x_array)
  call MPI_Finalize()

contains

  ! ---- the command line (the C program's options) ------------------------------

  subroutine usage()
    write (output_unit, '(a)') 'usage: mpiexec -n P ' // PROGRAM_NAME // ' [options]', &
         'Dense Jacobi solver (FLEX-MPI thesis, Algorithm 9) on a generated, strictly', &
         'diagonally dominant system A x = b (the same system for every P), in Fortran.', &
         '  --size N               order of A (default 2000)', &
         '  --iterations N         Jacobi iterations, all monitored (default 500)', &
         '  --seed N               seed of the generated system (default 1)', &
         '  --sampling-interval N  iterations per sampling interval (FLEXMPI_SAMPLING_INTERVAL)', &
         '  --trace FILE           JSON-lines trace written by rank 0 (FLEXMPI_TRACE)', &
         '  --static               no load balancing (FLEXMPI_POLICY=none), same code', &
         '  --quiet                print one summary line instead of the report', &
         '  --help                 print this help'
  end subroutine usage

  function argument(k) result(text)
    integer, intent(in) :: k
    character(len=:), allocatable :: text
    integer :: length
    call get_command_argument(k, length=length)
    allocate(character(len=length) :: text)
    call get_command_argument(k, text)
  end function argument

  ! A whole number in [minimum, maximum], or an error naming the option.
  subroutine parse_int(name, text, minimum, maximum, value, o)
    character(len=*), intent(in) :: name, text
    integer, intent(in) :: minimum, maximum
    integer, intent(inout) :: value
    type(Options), intent(inout) :: o
    integer(int64) :: parsed
    integer :: status
    character(len=32) :: bounds
    read (text, '(i20)', iostat=status) parsed
    if (len(text) == 0 .or. verify(text, '0123456789') /= 0 .or. status /= 0 .or. &
         parsed < minimum .or. parsed > maximum) then
       write (bounds, '(i0,a,i0)') minimum, ' to ', maximum
       o%error = name // " '" // text // "' is invalid: expected a whole number from " // &
            trim(bounds)
    else
       value = int(parsed)
    end if
  end subroutine parse_int

  ! Accepts "--name value" and "--name=value". Stops at the first error.
  function parse_options() result(o)
    type(Options) :: o
    character(len=:), allocatable :: arg, name, value
    integer :: k, equals, interval
    logical :: is_flag
    o%error = ''
    k = 1
    do while (k <= command_argument_count() .and. len(o%error) == 0)
       arg = argument(k)
       equals = index(arg, '=')
       name = arg
       if (equals > 0) name = arg(:equals - 1)
       is_flag = name == '--quiet' .or. name == '--help' .or. name == '--static'
       value = ''
       if (equals > 0) then
          value = arg(equals + 1:)
       else if (.not. is_flag .and. k < command_argument_count()) then
          k = k + 1
          value = argument(k)
       end if
       if (is_flag .and. equals > 0) then
          o%error = name // ' takes no value'
       else if (.not. is_flag .and. len(value) == 0 .and. any(name == [character(len=19) :: &
            '--size', '--iterations', '--seed', '--sampling-interval', '--trace'])) then
          o%error = name // ' needs a value'
       else if (name == '--quiet') then
          o%quiet = .true.
       else if (name == '--help') then
          o%help = .true.
       else if (name == '--static') then
          o%static_mode = .true.
       else if (name == '--size') then
          call parse_int(name, value, 1, MAX_SIZE, o%size, o)
       else if (name == '--iterations') then
          call parse_int(name, value, 1, 1000000000, o%iterations, o)
       else if (name == '--seed') then
          call parse_int(name, value, 0, huge(0), o%seed, o)
       else if (name == '--sampling-interval') then
          call parse_int(name, value, 1, 1000000000, interval, o)
          o%sampling_interval = value
       else if (name == '--trace') then
          o%trace = value
       else
          o%error = "unknown option '" // arg // "' (see --help)"
       end if
       k = k + 1
    end do
  end function parse_options

  subroutine set_env(name, value)
    character(len=*), intent(in) :: name, value
    if (c_setenv(name // c_null_char, value // c_null_char, 1_c_int) /= 0) then
       error stop PROGRAM_NAME // ': setenv failed'
    end if
  end subroutine set_env

  ! ---- the generated system (apps/jacobi/jacobi.c, bit for bit) -----------------

  ! SplitMix64 finaliser on the bits of an int64 (wrapping arithmetic, -fwrapv;
  ! shiftr is a logical shift): entry (i, j) depends on (seed, n, i, j) only.
  pure function mix(input) result(z)
    integer(int64), intent(in) :: input
    integer(int64) :: z
    z = input + (-7046029254386353131_int64)               ! 0x9e3779b97f4a7c15
    z = ieor(z, shiftr(z, 30)) * (-4658895280553007687_int64)  ! 0xbf58476d1ce4e5b9
    z = ieor(z, shiftr(z, 27)) * (-7723592293110705685_int64)  ! 0x94d049bb133111eb
    z = ieor(z, shiftr(z, 31))
  end function mix

  ! Off-diagonal entry in [-1, 1) (0-based i, j).
  pure real(real64) function off_diagonal(seed, n, i, j)
    integer(int64), intent(in) :: seed
    integer, intent(in) :: n, i, j
    integer(int64) :: bits
    bits = mix(ieor(seed, mix(int(i, int64) * n + j)))
    off_diagonal = real(shiftr(bits, 11), real64) * 2.0_real64**(-52) - 1.0_real64
  end function off_diagonal

  ! The known solution (0-based j).
  pure real(real64) function x_true(j)
    integer, intent(in) :: j
    x_true = 1.0_real64 + 0.1_real64 * real(mod(j, 10), real64)
  end function x_true

  ! Rows first .. first+count-1 (0-based) of A, b and the diagonal; the
  ! diagonal is 2 sum|a_ij| + 1: strictly dominant (thesis 6.1.1.1).
  subroutine generate_rows(seed, n, first, count, a, b, diagonal)
    integer(int64), intent(in) :: seed
    integer, intent(in) :: n, first, count
    real(real64), intent(out) :: a(:, :), b(:), diagonal(:)
    integer :: r, i, j
    real(real64) :: magnitude, total
    do r = 1, count
       i = first + r - 1
       magnitude = 0
       do j = 0, n - 1
          a(j + 1, r) = 0
          if (j /= i) a(j + 1, r) = off_diagonal(seed, n, i, j)
          magnitude = magnitude + abs(a(j + 1, r))
       end do
       a(i + 1, r) = 2 * magnitude + 1
       diagonal(r) = a(i + 1, r)
       total = 0
       do j = 0, n - 1
          total = total + a(j + 1, r) * x_true(j)
       end do
       b(r) = total
    end do
  end subroutine generate_rows

  ! One Jacobi sweep (Alg. 9, lines 3-9), the sums in the C program's order.
  subroutine sweep(n, first, count, a, b, diagonal, x_old, x_new)
    integer, intent(in) :: n, first, count
    real(real64), intent(in) :: a(:, :), b(:), diagonal(:), x_old(:)
    real(real64), intent(out) :: x_new(:)
    integer :: r, i, j
    real(real64) :: total
    do r = 1, count
       i = first + r  ! 1-based global row
       total = 0
       do j = 1, i - 1
          total = total + a(j, r) * x_old(j)
       end do
       do j = i + 1, n
          total = total + a(j, r) * x_old(j)
       end do
       x_new(r) = (b(r) - total) / diagonal(r)
    end do
  end subroutine sweep

  ! ||Ax - b||_inf and ||x - x_true||_inf over the local rows.
  subroutine residual_norms(n, first, count, a, b, x, norms)
    integer, intent(in) :: n, first, count
    real(real64), intent(in) :: a(:, :), b(:), x(:)
    real(real64), intent(out) :: norms(2)
    integer :: r, j
    real(real64) :: total
    norms = 0
    do r = 1, count
       total = 0
       do j = 1, n
          total = total + a(j, r) * x(j)
       end do
       norms(1) = max(norms(1), abs(total - b(r)))
       norms(2) = max(norms(2), abs(x(first + r) - x_true(first + r - 1)))
    end do
  end subroutine residual_norms

  ! ---- flexmpi ------------------------------------------------------------------

  ! The pointers onto the registered arrays' current blocks.
  subroutine associate_arrays()
    call XMPI_Array_pointer(a_array, a)
    call XMPI_Array_pointer(b_array, b)
    call XMPI_Array_pointer(diagonal_array, diagonal)
    call XMPI_Array_pointer(x_array, x)
  end subroutine associate_arrays

  ! ---- output: the C program's printf formats ----------------------------------

  ! printf's %.17g: 17 significant digits, trailing zeros dropped, positional
  ! for decimal exponents -4 .. 16, else d.ddde+XX.
  function format_g17(value) result(text)
    real(real64), intent(in) :: value
    character(len=:), allocatable :: text
    character(len=40) :: scientific
    character(len=17) :: digits
    integer :: exponent, point
    write (scientific, '(es25.16e4)') value
    scientific = adjustl(scientific)
    text = ''
    if (scientific(1:1) == '-') then
       text = '-'
       scientific = scientific(2:)
    end if
    digits = scientific(1:1) // scientific(3:18)
    read (scientific(20:), *) exponent
    if (exponent >= -4 .and. exponent < 17) then
       if (exponent >= 0) then
          point = exponent + 1
          text = text // strip_fraction(digits(:point) // '.' // digits(point + 1:))
       else
          text = text // strip_fraction('0.' // repeat('0', -exponent - 1) // digits)
       end if
    else
       text = text // strip_fraction(digits(1:1) // '.' // digits(2:)) // exponent_text(exponent)
    end if
  end function format_g17

  ! A decimal number without the trailing zeros of its fraction (nor a lone point).
  function strip_fraction(number) result(text)
    character(len=*), intent(in) :: number
    character(len=:), allocatable :: text
    text = number
    if (index(text, '.') == 0) return
    do while (text(len(text):len(text)) == '0')
       text = text(:len(text) - 1)
    end do
    if (text(len(text):len(text)) == '.') text = text(:len(text) - 1)
  end function strip_fraction

  ! printf's exponent: e, sign, at least two digits.
  function exponent_text(exponent) result(text)
    integer, intent(in) :: exponent
    character(len=:), allocatable :: text
    character(len=8) :: digits
    write (digits, '(i2.2)') abs(exponent)
    text = 'e' // merge('-', '+', exponent < 0) // trim(adjustl(digits))
  end function exponent_text

  ! printf's %.3e.
  function format_e3(value) result(text)
    real(real64), intent(in) :: value
    character(len=:), allocatable :: text
    character(len=24) :: scientific
    integer :: exponent
    write (scientific, '(es24.3e4)') value
    scientific = adjustl(scientific)
    read (scientific(index(scientific, 'E') + 1:), *) exponent
    text = scientific(:index(scientific, 'E') - 1) // exponent_text(exponent)
  end function format_e3

  subroutine report(norms, checksum, time)
    real(real64), intent(in) :: norms(2), checksum, time
    character(len=32) :: seconds
    write (seconds, '(f32.6)') time  ! printf's %.6f: a leading 0 before the point
    seconds = adjustl(seconds)
    if (opts%quiet) then
       write (output_unit, '(a,i0,a,i0,a,i0,a)', advance='no') 'program=' // PROGRAM_NAME // &
            ' size=', n, ' iterations=', opts%iterations, ' procs=', nprocs, ' time='
       write (output_unit, '(a)') trim(seconds) // ' residual=' // format_e3(norms(1)) // &
            ' checksum=' // format_g17(checksum)
    else
       write (output_unit, '(a,i0,a,i0,a,i0,a,i0)') PROGRAM_NAME // &
            ': dense Jacobi (thesis Alg. 9), n=', n, ', ', opts%iterations, ' iterations, ', &
            nprocs, ' processes, seed ', opts%seed
       write (output_unit, '(a)') '  residual ||Ax-b||_inf     ' // format_e3(norms(1)), &
            '  error ||x-x_true||_inf    ' // format_e3(norms(2)), &
            '  checksum sum(x)           ' // format_g17(checksum), &
            '  time, max over ranks      ' // trim(seconds) // ' s'
    end if
  end subroutine report

end program jacobi_fortran
