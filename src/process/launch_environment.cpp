#include "process/launch_environment.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"

extern char** environ;

namespace flexmpi::launch {

using nlohmann::json;

MPI_Comm merge_with_children(MPI_Comm& inter) {
  MPI_Comm peer = MPI_COMM_NULL;
  check_mpi(PMPI_Intercomm_merge(inter, 0, &peer), "MPI_Intercomm_merge (spawn)");
  check_mpi(PMPI_Comm_disconnect(&inter), "MPI_Comm_disconnect (spawn)");
  return peer;
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  PMPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(std::max(length, 0)));
}

json flexmpi_environment() {
  json env = json::object();
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (text.rfind("FLEXMPI_", 0) == 0 && equals != std::string::npos) {
      env[text.substr(0, equals)] = text.substr(equals + 1);
    }
  }
  return env;
}

void apply_environment(const json& env) {
  std::vector<std::string> mine;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    if (text.rfind("FLEXMPI_", 0) == 0) mine.push_back(text.substr(0, text.find('=')));
  }
  for (const std::string& name : mine) unsetenv(name.c_str());
  for (const auto& [name, value] : env.items()) {
    setenv(name.c_str(), value.get<std::string>().c_str(), 1);
  }
}

namespace {

bool executable_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string current_directory() {
  std::vector<char> buffer(4096);
  if (getcwd(buffer.data(), buffer.size()) == nullptr) return ".";
  return buffer.data();
}

std::string resolve_command(const std::string& command) {
  if (command.empty()) throw Error(Errc::invalid_argument, "command is empty");
  std::vector<std::string> candidates;
  if (command.find('/') != std::string::npos) {
    candidates.push_back(command[0] == '/' ? command : current_directory() + "/" + command);
  } else {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path != nullptr ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (!dir.empty()) candidates.push_back(dir + "/" + command);
    }
    candidates.push_back(current_directory() + "/" + command);  // as in the thesis' examples
  }
  for (const std::string& candidate : candidates) {
    if (executable_file(candidate)) return candidate;
  }
  throw Error(Errc::invalid_argument,
              "command '" + command + "': no executable file of that name" +
                  (command.find('/') != std::string::npos ? std::string()
                                                          : " in PATH or the working directory") +
                  " (checked on rank 0's host)");
}

std::string self_executable() {
  std::vector<char> buffer(4096);
  const ssize_t length = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (length <= 0) throw Error(Errc::unsupported, "cannot find this program (/proc/self/exe)");
  return std::string(buffer.data(), static_cast<std::size_t>(length));
}

std::string info_value(MPI_Info info, const char* key) {
  if (info == MPI_INFO_NULL) return {};
  int length = 0, flag = 0;
  check_mpi(PMPI_Info_get_valuelen(info, key, &length, &flag), "MPI_Info_get_valuelen");
  if (flag == 0) return {};
  std::vector<char> value(static_cast<std::size_t>(length) + 1);
  check_mpi(PMPI_Info_get(info, key, length, value.data(), &flag), "MPI_Info_get");
  return value.data();
}

void mark_as_flexmpi_spawn(MPI_Info info) {
  std::string environment = info_value(info, "env");
  if (!environment.empty() && environment.back() != '\n') environment += '\n';
  environment += std::string(kSpawnedMarker) + "=1";
  // The MPI-IO component the parents chose (interposition/init_finalize.cpp):
  // a collective file open needs the same on every process.
  if (const char* io = std::getenv("OMPI_MCA_io"); io != nullptr) {
    environment += std::string("\nOMPI_MCA_io=") + io;
  }
  check_mpi(PMPI_Info_set(info, "env", environment.c_str()), "MPI_Info_set");
}

json to_json(const Decomposition& blocks) {
  json list = json::array();
  for (const RowBlock& block : blocks) list.push_back({block.count, block.displ});
  return list;
}

Decomposition from_json(const json& list) {
  Decomposition blocks;
  for (const json& block : list)
    blocks.push_back({block[0].get<std::int64_t>(), block[1].get<std::int64_t>()});
  return blocks;
}

void free_comm(MPI_Comm& comm) {
  if (comm != MPI_COMM_NULL) PMPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

void set_error_handlers(MPI_Comm library, MPI_Comm world, MPI_Comm old_world) {
  check_mpi(PMPI_Comm_set_errhandler(library, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  if (world == MPI_COMM_NULL || old_world == MPI_COMM_NULL) return;
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(old_world, &handler) == MPI_SUCCESS) {
    PMPI_Comm_set_errhandler(world, handler);
    PMPI_Errhandler_free(&handler);
  }
}

}  // namespace flexmpi::launch
