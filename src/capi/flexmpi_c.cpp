// The C API (include/flexmpi.h): checks the arguments C can get wrong (null
// pointers, array lengths) and forwards to the C++ API. One helper turns any
// C++ failure into an XMPI_ERR_* code and keeps its message; no exception
// crosses extern "C".
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "capi/guarded.hpp"
#include "core/runtime.hpp"
#include "flexmpi.h"
#include "flexmpi/flexmpi.hpp"

namespace {

using flexmpi::capi::guarded;

void require_pointer(const void* pointer, const char* argument) {
  if (pointer == nullptr) {
    throw flexmpi::Error(flexmpi::Errc::invalid_argument,
                         std::string(argument) + " is NULL: expected a valid pointer");
  }
}

// command of XMPI_Spawn / XMPI_Eval_reconfig: NULL is this program (the
// C++ API's empty command); an empty string names no program at all.
std::string spawn_command(const char* command) {
  if (command == nullptr) return {};
  if (*command == '\0') {
    throw flexmpi::Error(flexmpi::Errc::invalid_argument,
                         "command is an empty string: expected the program to spawn, or NULL "
                         "for this program with its own arguments");
  }
  return command;
}

// node_class of XMPI_Spawn / XMPI_Remove: one class per process, or NULL.
std::vector<std::string> node_classes(char* node_class[], int nprocs) {
  std::vector<std::string> classes;
  if (node_class == nullptr || nprocs <= 0) return classes;
  for (int k = 0; k < nprocs; ++k) {
    require_pointer(node_class[k], ("node_class[" + std::to_string(k) + "]").c_str());
    classes.emplace_back(node_class[k]);
  }
  return classes;
}

// By reference, and read as the int it is: C lets any int through the enum,
// and C++ may not even load a value outside the enumerators' range (UBSan:
// "not a valid value for type 'XMPI_Scheme'"), which a bad argument is.
flexmpi::Scheme to_scheme(const XMPI_Scheme& argument) {
  int scheme = 0;
  static_assert(sizeof scheme == sizeof argument);
  std::memcpy(&scheme, &argument, sizeof scheme);
  switch (scheme) {
    case XMPI_DISTRIBUTED:
      return flexmpi::Scheme::distributed;
    case XMPI_REPLICATED:
      return flexmpi::Scheme::replicated;
    case XMPI_DISTRIBUTED_IN_PLACE:
      return flexmpi::Scheme::distributed_in_place;
  }
  throw flexmpi::Error(flexmpi::Errc::invalid_argument,
                       "scheme=" + std::to_string(scheme) +
                           ": expected XMPI_DISTRIBUTED, XMPI_REPLICATED or "
                           "XMPI_DISTRIBUTED_IN_PLACE");
}

}  // namespace

extern "C" {

const char* XMPI_Error_string(int code) {
  switch (code) {
    case XMPI_SUCCESS:
      return "success";
    case XMPI_ERR_ARG:
      return "invalid argument";
    case XMPI_ERR_STATE:
      return "call out of order (flexmpi not initialised or iteration state wrong)";
    case XMPI_ERR_UNSUPPORTED:
      return "not supported by this MPI library or machine";
    case XMPI_ERR_EVENT:
      return "requested event is not available";
    case XMPI_ERR_MPI:
      return "an MPI call failed";
    case XMPI_ERR_NOMEM:
      return "out of memory";
    case XMPI_ERR_CONFIG:
      return "invalid FLEXMPI_* setting";
    case XMPI_ERR_INTERNAL:
      return "internal error in flexmpi";
    case XMPI_ERR_IO:
      return "a file could not be read or written, or is damaged";
    default:
      return "unknown flexmpi error code";
  }
}

const char* XMPI_Last_error_message(void) { return flexmpi::capi::last_error().c_str(); }

int XMPI_Monitor_iter_begin(char* events[]) {
  return guarded([&] {
    std::vector<std::string> names;
    for (char** event = events; event != nullptr && *event != nullptr; ++event)
      names.emplace_back(*event);
    flexmpi::monitor_begin(names);
    return XMPI_SUCCESS;
  });
}

int XMPI_Monitor_iter_end(long long* counts) {
  return guarded([&] {
    const std::vector<long long> values = flexmpi::monitor_end();
    if (counts != nullptr) std::copy(values.begin(), values.end(), counts);
    return XMPI_SUCCESS;
  });
}

int XMPI_Monitor_si_init(void) {
  return guarded([] {
    flexmpi::monitor_si_init();
    return XMPI_SUCCESS;
  });
}

int XMPI_Get_monitor_totals(long long* iterations, double* wall, double* cpu, double* mpi,
                            double* computation) {
  return guarded([&] {
    const flexmpi::MonitorTotals totals = flexmpi::monitor_totals();
    if (iterations != nullptr) *iterations = totals.iterations;
    if (wall != nullptr) *wall = totals.wall;
    if (cpu != nullptr) *cpu = totals.cpu;
    if (mpi != nullptr) *mpi = totals.mpi;
    if (computation != nullptr) *computation = totals.computation;
    return XMPI_SUCCESS;
  });
}

int XMPI_Set_work(double work_units) {
  return guarded([&] {
    flexmpi::set_work(work_units);
    return XMPI_SUCCESS;
  });
}

int XMPI_Get_wsize(int rank, int nprocs, int dsize, int* count, int* displ) {
  return guarded([&] {
    require_pointer(count, "count");
    require_pointer(displ, "displ");
    const flexmpi::Partition partition = flexmpi::get_wsize(rank, nprocs, dsize);
    *count = partition.count;
    *displ = partition.displ;
    return XMPI_SUCCESS;
  });
}

int XMPI_Get_decomposition(int nprocs, int dsize, int* counts, int* displs) {
  return guarded([&] {
    require_pointer(counts, "counts");
    require_pointer(displs, "displs");
    const std::vector<flexmpi::Partition> blocks = flexmpi::get_decomposition(nprocs, dsize);
    for (std::size_t p = 0; p < blocks.size(); ++p) {
      counts[p] = blocks[p].count;
      displs[p] = blocks[p].displ;
    }
    return XMPI_SUCCESS;
  });
}

int XMPI_Register_vector(void* ptr_address, long long size, MPI_Datatype type, XMPI_Scheme scheme) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::register_vector(static_cast<void**>(ptr_address), size, type, to_scheme(scheme));
    return XMPI_SUCCESS;
  });
}

int XMPI_Register_dense(void* ptr_address, long long size, MPI_Datatype type, XMPI_Scheme scheme) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::register_dense(static_cast<void**>(ptr_address), size, type, to_scheme(scheme));
    return XMPI_SUCCESS;
  });
}

int XMPI_Register_rows(void* ptr_address, long long rows, long long row_length, int ghost_rows,
                       MPI_Datatype type, XMPI_Scheme scheme) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::register_rows(static_cast<void**>(ptr_address), {rows, row_length, ghost_rows}, type,
                           to_scheme(scheme));
    return XMPI_SUCCESS;
  });
}

int XMPI_Register_pair(void* current_address, void* next_address, long long rows,
                       long long row_length, int ghost_rows, MPI_Datatype type,
                       XMPI_Scheme scheme) {
  return guarded([&] {
    require_pointer(current_address, "current_address");
    require_pointer(next_address, "next_address");
    flexmpi::register_pair(static_cast<void**>(current_address), static_cast<void**>(next_address),
                           {rows, row_length, ghost_rows}, type, to_scheme(scheme));
    return XMPI_SUCCESS;
  });
}

int XMPI_Register_sparse(int** ia_address, int** ja_address, void* a_address, long long size,
                         long long nnz, MPI_Datatype type, XMPI_Scheme scheme) {
  return guarded([&] {
    require_pointer(ia_address, "ia_address");
    require_pointer(ja_address, "ja_address");
    require_pointer(a_address, "a_address");
    flexmpi::register_sparse(ia_address, ja_address, static_cast<void**>(a_address), size, nnz,
                             type, to_scheme(scheme));
    return XMPI_SUCCESS;
  });
}

int XMPI_Unregister(void* ptr_address) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::unregister(ptr_address);
    return XMPI_SUCCESS;
  });
}

int XMPI_Get_blocks_changed(int* changed) {
  return guarded([&] {
    require_pointer(changed, "changed");
    *changed = flexmpi::blocks_changed() ? 1 : 0;
    return XMPI_SUCCESS;
  });
}

int XMPI_Halo_exchange(void* ptr_address) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::halo_exchange(ptr_address);
    return XMPI_SUCCESS;
  });
}

int XMPI_Halo_start(void* ptr_address) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::halo_start(ptr_address);
    return XMPI_SUCCESS;
  });
}

int XMPI_Halo_finish(void* ptr_address) {
  return guarded([&] {
    require_pointer(ptr_address, "ptr_address");
    flexmpi::halo_finish(ptr_address);
    return XMPI_SUCCESS;
  });
}

int XMPI_Redistribute_data(int scount, int sdispl, int rcount, int rdispl) {
  return guarded([&] {
    flexmpi::redistribute_data({scount, sdispl}, {rcount, rdispl});
    return XMPI_SUCCESS;
  });
}

namespace {

// The weights of every row (FLEXMPI_LB_MODEL=weight), or none.
std::span<const double> row_weights(const double* weight) {
  const std::int64_t rows = flexmpi::Runtime::get().state().global_rows();
  if (weight == nullptr || rows < 0) return {};
  return {weight, static_cast<std::size_t>(rows)};
}

}  // namespace

int XMPI_Eval_lbalance(int rank, int nprocs, int it, int maxit, int* count, int* displ,
                       double* weight) {
  return guarded([&] {
    require_pointer(count, "count");
    require_pointer(displ, "displ");
    const flexmpi::Partition block =
        flexmpi::eval_lbalance(rank, nprocs, it, maxit, {*count, *displ}, row_weights(weight));
    *count = block.count;
    *displ = block.displ;
    return XMPI_SUCCESS;
  });
}

int XMPI_Eval_reconfig(int rank, int nprocs, int it, int maxit, int* count, int* displ,
                       double* weight, char* argv[], char* command) {
  return guarded([&] {
    require_pointer(count, "count");
    require_pointer(displ, "displ");
    flexmpi::ReconfigureOptions options;
    options.command = spawn_command(command);
    for (char** arg = argv; arg != nullptr && *arg != nullptr; ++arg)
      options.argv.emplace_back(*arg);
    const flexmpi::Partition block = flexmpi::eval_reconfig(
        rank, nprocs, it, maxit, {*count, *displ}, row_weights(weight), options);
    *count = block.count;
    *displ = block.displ;
    return XMPI_SUCCESS;
  });
}

int XMPI_Get_process_status(void) {
  return guarded([] { return static_cast<int>(flexmpi::process_status()); });
}

int XMPI_Spawn(const char* command, char* argv[], int nprocs, MPI_Info info, char* node_class[]) {
  return guarded([&] {
    std::vector<std::string> arguments;
    for (char** arg = argv; arg != nullptr && *arg != nullptr; ++arg) arguments.emplace_back(*arg);
    const std::vector<std::string> classes = node_classes(node_class, nprocs);
    flexmpi::SpawnOptions options;
    // The thesis passes NULL (Fig. 4.13): read it as MPI_INFO_NULL.
    options.info = info == MPI_Info{} ? MPI_INFO_NULL : info;
    flexmpi::spawn_processes(spawn_command(command), arguments, nprocs, classes, options);
    return XMPI_SUCCESS;
  });
}

int XMPI_Remove(int nprocs, char* node_class[]) {
  return guarded([&] {
    flexmpi::remove_processes(nprocs, node_classes(node_class, nprocs));
    return XMPI_SUCCESS;
  });
}

int XMPI_Get_data(int* it) {
  return guarded([&] {
    require_pointer(it, "it");
    *it = flexmpi::get_data();
    return XMPI_SUCCESS;
  });
}

int XMPI_Send_data(int it, int* count, int* displ) {
  return guarded([&] {
    require_pointer(count, "count");
    require_pointer(displ, "displ");
    if (it < 0) {
      throw flexmpi::Error(
          flexmpi::Errc::invalid_argument,
          "it=" + std::to_string(it) + ": expected the iteration just completed (>= 0)");
    }
    const flexmpi::Partition block = flexmpi::send_data(it);
    *count = block.count;
    *displ = block.displ;
    return XMPI_SUCCESS;
  });
}

int XMPI_Resume(int* it) {
  return guarded([&] {
    require_pointer(it, "it");
    *it = flexmpi::resume();
    return XMPI_SUCCESS;
  });
}

int XMPI_Checkpoint(int next_it) {
  return guarded([&] {
    flexmpi::write_checkpoint(next_it);
    return XMPI_SUCCESS;
  });
}

int XMPI_Register_record(const char* name, void* buffer, long long count, MPI_Datatype type) {
  return guarded([&] {
    require_pointer(name, "name");
    flexmpi::register_record(name, buffer, count, type);
    return XMPI_SUCCESS;
  });
}

}  // extern "C"
