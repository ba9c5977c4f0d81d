#include "base/context.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>

#include "base/host_id.hpp"
#include "base/mpi_check.hpp"
#include "flexmpi.h"
#include "flexmpi/error.hpp"

extern "C" {
MPI_Comm XMPI_COMM_WORLD = MPI_COMM_NULL;
/// XMPI_COMM_WORLD's Fortran handle: the XMPI_COMM_WORLD variable of the
/// Fortran modules (src/fortran/) is bound to it, so it is current whenever
/// XMPI_COMM_WORLD is, from MPI_Init on. -1 until then.
MPI_Fint flexmpi_f_comm_world = -1;
}

namespace flexmpi {

Context::Context(const std::string& log_level, MPI_Comm world) {
  check_mpi(PMPI_Comm_dup(world, &library_comm_), "MPI_Comm_dup");
  check_mpi(PMPI_Comm_dup(world, &XMPI_COMM_WORLD), "MPI_Comm_dup");
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  check_mpi(PMPI_Get_processor_name(host, &host_length), "MPI_Get_processor_name");
  host_id_ = host_id_of(std::string_view(host, host_length));
  node_cores_ = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  log_ = std::make_shared<spdlog::logger>("flexmpi",
                                          std::make_shared<spdlog::sinks::stderr_sink_st>());
  log_->set_level(spdlog::level::from_str(log_level));
  rebind(library_comm_, XMPI_COMM_WORLD);
}

Context::~Context() {
  if (XMPI_COMM_WORLD != MPI_COMM_NULL) PMPI_Comm_free(&XMPI_COMM_WORLD);
  flexmpi_f_comm_world = MPI_Comm_c2f(MPI_COMM_NULL);
  if (library_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&library_comm_);
}

void Context::rebind(MPI_Comm library, MPI_Comm world, const std::string& label) {
  ++generation_;
  library_comm_ = library;
  XMPI_COMM_WORLD = world;
  flexmpi_f_comm_world = MPI_Comm_c2f(world);
  check_mpi(PMPI_Comm_rank(library, &rank_), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(library, &size_), "MPI_Comm_size");
  log_->set_pattern("[flexmpi " + (label.empty() ? std::to_string(rank_) : label) + "] %v");
}

}  // namespace flexmpi
