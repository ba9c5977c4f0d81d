#include "resources/slurm/slurm_resources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <any>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "flexmpi/error.hpp"
#include "resources/node_classes.hpp"
#include "resources/slurm/slurm_launch.hpp"
#include "util/shell_quote.hpp"
#include "util/split.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

const char* environment_variable(const char* name) { return std::getenv(name); }

constexpr char kFieldSeparator = '|';
// How often a helper job checks that its job still exists.
constexpr int kHelperPollSeconds = 10;
// How often a joining helper looks for scripts to run (every 0.2 s).
constexpr int kLaunchPollsPerSecond = 5;

// The non-empty lines of a command's output.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::string_view line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
  }
  return lines;
}

template <typename Number>
std::optional<Number> number_in(std::string_view text) {
  Number value{};
  const auto [end, failed] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (failed != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The fields of one line of a `-o a|b|c` output; Error naming the command
// and line if there are not `count` of them.
std::vector<std::string_view> fields_of(std::string_view line, std::size_t count,
                                        std::string_view command, std::string_view format) {
  std::vector<std::string_view> fields = split(line, kFieldSeparator);
  if (fields.size() != count) {
    throw Error(Errc::unsupported, std::string(command) + " printed '" + std::string(line) +
                                       "'; expected " + std::string(format));
  }
  return fields;
}

template <typename Number>
Number field_number(std::string_view field, std::string_view line, std::string_view command) {
  const std::optional<Number> value = number_in<Number>(field);
  if (!value || *value < 0) {
    throw Error(Errc::unsupported, std::string(command) + " printed '" + std::string(line) +
                                       "': '" + std::string(field) + "' is not a count");
  }
  return *value;
}

std::string required(const std::function<const char*(const char*)>& variable, const char* name) {
  const char* value = variable(name);
  if (value == nullptr || *value == '\0') {
    throw Error(Errc::bad_config, std::string("FLEXMPI_RESOURCES=slurm: ") + name +
                                      " is not set: run inside salloc or sbatch");
  }
  return value;
}

bool holds(const SlurmHoldings& held, const std::string& host) {
  auto named = [&](const NodeDescription& n) { return n.hostname == host; };
  return std::ranges::any_of(held.allocation, named) || std::ranges::any_of(held.helpers, named);
}

const SlurmQueuedJob& queued_job(const std::vector<SlurmQueuedJob>& queue, const std::string& id) {
  const auto job = std::ranges::find(queue, id, &SlurmQueuedJob::id);
  if (job == queue.end()) {
    throw Error(Errc::unsupported, "squeue does not list job " + id + " (the job of this run)");
  }
  return *job;
}

// Nodes that pending jobs of higher priority than `job` wait for.
int nodes_wanted_by_others(const SlurmJob& job, const std::vector<SlurmQueuedJob>& queue) {
  const long long own_priority = queued_job(queue, job.id).priority;
  int wanted = 0;
  for (const SlurmQueuedJob& other : queue) {
    if (other.state == "PENDING" && other.priority > own_priority &&
        other.name != helper_job_name(job.id)) {
      wanted += other.nodes;
    }
  }
  return wanted;
}

std::vector<NodeDescription> idle_nodes(const SlurmJob& job, const SlurmHoldings& held,
                                        const std::vector<SlurmNode>& partition) {
  std::vector<NodeDescription> idle;
  for (const SlurmNode& node : partition) {
    if (node.state == "idle" && !holds(held, node.name)) {
      idle.push_back({node.name, job.partition, node.cpus, std::nullopt});
    }
  }
  return idle;
}

constexpr std::string_view kJoinSetting = "FLEXMPI_SLURM_JOIN";
constexpr std::string_view kMpiexecSetting = "FLEXMPI_SLURM_MPIEXEC";

// Helper jobs start the new processes, which join, instead of MPI_Comm_spawn
// (docs/design/slurm.md).
std::vector<SettingDescriptor> join_settings() {
  return {
      {kJoinSetting, "slurm-join", "(spawn)",
       "the readable file in which ompi-server wrote its URI (ompi-server -r FILE)",
       "with FLEXMPI_RESOURCES=slurm, new processes start inside the helper job of their node "
       "and join the job (MPI_Comm_connect) instead of MPI_Comm_spawn; mpiexec must have been "
       "given --ompi-server file:FILE",
       [](std::string_view v) -> std::any {
         // a directory, or a file that cannot be read, named
         parsed_by_component(
             [&] { return read_text_file(std::string(v), "ompi-server URI", Errc::bad_config); });
         return std::string(v);
       },
       true},
      {kMpiexecSetting, "slurm-mpiexec", "mpiexec", "a command (Open MPI's mpiexec)",
       "the mpiexec a helper job starts joining processes with (FLEXMPI_SLURM_JOIN)",
       [](std::string_view v) -> std::any {
         if (v.empty()) throw SettingRejected{};
         return std::string(v);
       }},
  };
}

JoinLaunch join_launch(const StrategySettings& settings) {
  return {settings.value_or<std::string>(kJoinSetting, ""),
          settings.value_or<std::string>(kMpiexecSetting, "mpiexec")};
}

}  // namespace

SlurmJob slurm_job_from_environment(const std::function<const char*(const char*)>& variable) {
  SlurmJob job;
  job.id = required(variable, "SLURM_JOB_ID");
  job.partition = required(variable, "SLURM_JOB_PARTITION");
  job.node_list = required(variable, "SLURM_JOB_NODELIST");
  try {
    job.cpus_per_node = parse_cpus_per_node(required(variable, "SLURM_JOB_CPUS_PER_NODE"));
  } catch (const Error& e) {
    throw Error(Errc::bad_config, std::string("FLEXMPI_RESOURCES=slurm: ") + e.what());
  }
  return job;
}

std::vector<int> parse_cpus_per_node(std::string_view value) {
  std::vector<int> cpus;
  for (std::string_view item : split(value, ',')) {
    // "2(x3)": 3 nodes of 2 CPUs; "1": one node of 1 CPU.
    const std::size_t open = item.find("(x");
    std::optional<int> repeat = 1;
    if (open != std::string_view::npos) {
      repeat = item.ends_with(')') ? number_in<int>(item.substr(open + 2, item.size() - open - 3))
                                   : std::nullopt;
    }
    const auto count = number_in<int>(item.substr(0, open));
    if (!count || !repeat || *count < 1 || *repeat < 1) {
      throw Error(Errc::bad_config, "SLURM_JOB_CPUS_PER_NODE='" + std::string(value) +
                                        "': expected <cpus>[(x<nodes>)],... as Slurm sets it");
    }
    cpus.insert(cpus.end(), static_cast<std::size_t>(*repeat), *count);
  }
  return cpus;
}

std::vector<std::string> parse_hostnames(std::string_view text) {
  std::vector<std::string> hosts;
  for (std::string_view line : lines_of(text)) hosts.emplace_back(line);
  return hosts;
}

std::vector<std::string> sinfo_command(const std::string& partition) {
  return {"sinfo", "-h", "-N", "-p", partition, "-o", "%N|%T|%c"};
}

std::vector<SlurmNode> parse_sinfo_nodes(std::string_view text) {
  std::vector<SlurmNode> nodes;
  for (std::string_view line : lines_of(text)) {
    const auto fields = fields_of(line, 3, "sinfo", "name|state|cpus");
    // A node in several partitions is listed once per partition.
    if (std::ranges::find(nodes, fields[0], &SlurmNode::name) != nodes.end()) continue;
    nodes.push_back({std::string(fields[0]), std::string(fields[1]),
                     field_number<int>(fields[2], line, "sinfo")});
  }
  return nodes;
}

std::vector<std::string> squeue_command(const std::string& partition) {
  return {"squeue", "-h", "-p", partition, "-o", "%i|%T|%Q|%D|%j"};
}

std::vector<SlurmQueuedJob> parse_squeue_jobs(std::string_view text) {
  std::vector<SlurmQueuedJob> jobs;
  for (std::string_view line : lines_of(text)) {
    const auto fields = fields_of(line, 5, "squeue", "id|state|priority|nodes|name");
    jobs.push_back({std::string(fields[0]), std::string(fields[1]),
                    field_number<long long>(fields[2], line, "squeue"),
                    field_number<int>(fields[3], line, "squeue"), std::string(fields[4])});
  }
  return jobs;
}

std::string helper_job_name(const std::string& job_id) { return "flexmpi-helper-" + job_id; }

std::string helper_job_script(const std::string& job_id, int poll_seconds,
                              const std::string& launch_prefix) {
  const std::string until_job_gone =
      "s=$(squeue -h -j " + job_id +
      " -o %T 2>&1); case $? in 0) [ -n \"$s\" ] || break ;; *) case \"$s\" in *'Invalid job "
      "id'*) break ;; esac ;; esac; ";
  if (launch_prefix.empty()) {
    return "while :; do " + until_job_gone + "sleep " + std::to_string(poll_seconds) + "; done";
  }
  return "t=0; while :; do for f in " + shell_quote(launch_prefix) +
         "*.sh; do [ -f \"$f\" ] && mv \"$f\" \"$f.run\" && { sh \"$f.run\" & }; done; "
         "if [ $t -le 0 ]; then " +
         until_job_gone + "t=" + std::to_string(poll_seconds * kLaunchPollsPerSecond) +
         "; fi; t=$((t-1)); sleep 0.2; done";
}

std::string join_launch_script(const JoinLaunch& join, int count,
                               const std::vector<std::string>& argv, const std::string& directory,
                               const std::string& port, const std::string& log) {
  std::string command = shell_quote(join.mpiexec) + " --ompi-server " +
                        shell_quote("file:" + join.server_uri_file) + " -n " +
                        std::to_string(count) + " env FLEXMPI_JOIN_PORT=" + shell_quote(port);
  for (const std::string& word : argv) command += fmt::format(" {}", shell_quote(word));
  return "cd " + shell_quote(directory) +
         " || exit 1\n"
         "for v in $(env | cut -d= -f1 | grep -E '^(PMIX|OMPI)_'); do case $v in "
         "OMPI_MCA_orte_*|OMPI_MCA_ess*|OMPI_MCA_pmix*|OMPI_MCA_shmem_RUNTIME_QUERY_hint|"
         "OMPI_MCA_initial_wdir|OMPI_MCA_mpi_oversubscribe|PMIX_*) unset \"$v\" ;; "
         "OMPI_MCA_*|OMPI_ALLOW_*) ;; OMPI_*) unset \"$v\" ;; esac; done\n"
         "exec " +
         command + " >" + shell_quote(log) + " 2>&1\n";
}

SystemStatus plan_slurm_status(const SlurmJob& job, const SlurmHoldings& held,
                               const std::vector<SlurmNode>& partition,
                               const std::vector<SlurmQueuedJob>& queue) {
  SystemStatus status{held.allocation, {}};
  std::vector<NodeDescription> idle = idle_nodes(job, held, partition);
  const int wanted = nodes_wanted_by_others(job, queue);
  const int lacking = std::max(0, wanted - static_cast<int>(idle.size()));
  const std::size_t kept =
      held.helpers.size() - std::min(held.helpers.size(), static_cast<std::size_t>(lacking));
  for (std::size_t k = 0; k < held.helpers.size(); ++k) {
    NodeDescription node = held.helpers[k];
    if (k >= kept) node.processing_elements = 0;  // reclaimed: its processes must go
    status.nodes.push_back(std::move(node));
  }
  if (wanted == 0) status.nodes.insert(status.nodes.end(), idle.begin(), idle.end());
  return status;
}

SlurmResources::SlurmResources(SlurmJob job, std::unique_ptr<CommandRunner> commands,
                               JoinLaunch join, std::chrono::milliseconds booking_timeout)
    : job_(std::move(job)),
      commands_(std::move(commands)),
      booking_timeout_(booking_timeout),
      join_(std::move(join)) {
  if (launches_processes()) {
    const std::filesystem::path directory =
        std::filesystem::absolute(join_.server_uri_file).parent_path() /
        ("flexmpi-join-" + job_.id);
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error) {
      throw Error(Errc::bad_config, "FLEXMPI_SLURM_JOIN: cannot create " + directory.string() +
                                        " for the helper jobs' scripts: " + error.message());
    }
    launch_directory_ = directory.string();
  }
  const std::vector<std::string> hosts =
      parse_hostnames(commands_->run({"scontrol", "show", "hostnames", job_.node_list}));
  if (hosts.size() != job_.cpus_per_node.size()) {
    throw Error(Errc::bad_config,
                "SLURM_JOB_NODELIST=" + job_.node_list + " names " + std::to_string(hosts.size()) +
                    " nodes, SLURM_JOB_CPUS_PER_NODE " + std::to_string(job_.cpus_per_node.size()));
  }
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    held_.allocation.push_back({hosts[k], job_.partition, job_.cpus_per_node[k], std::nullopt});
  }
}

std::vector<std::string> SlurmResources::place_initial_processes(
    std::vector<std::string> processor_names) {
  const bool named =
      std::all_of(processor_names.begin(), processor_names.end(), [&](const std::string& name) {
        return std::any_of(held_.allocation.begin(), held_.allocation.end(),
                           [&](const NodeDescription& node) { return node.hostname == name; });
      });
  node_names_are_hosts_ = named;
  if (named) return processor_names;
  return flexmpi::place_initial_processes(held_.allocation,
                                          static_cast<int>(processor_names.size()),
                                          "FLEXMPI_RESOURCES=slurm: the allocation's nodes "
                                          "(whose names are not host names)");
}

SystemStatus SlurmResources::status(long long /*iteration*/) const {
  try {
    const std::vector<SlurmNode> partition =
        parse_sinfo_nodes(commands_->run(sinfo_command(job_.partition)));
    const std::vector<SlurmQueuedJob> queue =
        parse_squeue_jobs(commands_->run(squeue_command(job_.partition)));
    SystemStatus status = plan_slurm_status(job_, held_, partition, queue);
    status.warning = booking_error_;
    return status;
  } catch (const Error& e) {
    SystemStatus current{held_.allocation,
                         std::string("Slurm: ") + e.what() + "; the job keeps the nodes it holds"};
    current.nodes.insert(current.nodes.end(), held_.helpers.begin(), held_.helpers.end());
    return current;
  }
}

void SlurmResources::submit_allocation(const std::map<std::string, int>& processes_per_host) {
  booking_error_.clear();
  try {
    std::vector<std::string> unused;
    for (const NodeDescription& helper : held_.helpers) {
      const auto used = processes_per_host.find(helper.hostname);
      if (used == processes_per_host.end() || used->second == 0) unused.push_back(helper.hostname);
    }
    for (const std::string& host : unused) release(host);
    std::vector<std::string> new_hosts;
    for (const auto& [host, processes] : processes_per_host) {
      if (processes > 0 && !holds(held_, host)) new_hosts.push_back(host);
    }
    if (new_hosts.empty()) return;
    // The CPUs of the nodes to book; a host Slurm does not know is not booked.
    const std::vector<SlurmNode> partition =
        parse_sinfo_nodes(commands_->run(sinfo_command(job_.partition)));
    std::vector<SlurmNode> to_book;
    for (const std::string& host : new_hosts) {
      const auto node = std::ranges::find(partition, host, &SlurmNode::name);
      if (node != partition.end()) to_book.push_back(*node);
    }
    book(to_book);
  } catch (const Error& e) {
    booking_error_ = std::string("Slurm: ") + e.what();
  }
}

std::string SlurmResources::submit_helper(const SlurmNode& node) {
  const std::string output = commands_->run(
      {"sbatch", "--parsable", "-p", job_.partition, "-N", "1", "-w", node.name, "-J",
       helper_job_name(job_.id), "-o", "/dev/null", "--wrap",
       helper_job_script(
           job_.id, kHelperPollSeconds,
           launches_processes() ? launch_directory_ + "/" + node.name + "." : std::string())});
  const std::vector<std::string_view> lines = lines_of(output);  // "<id>[;<cluster>]"
  if (lines.empty())
    throw Error(Errc::unsupported, "sbatch printed no job id for node " + node.name);
  return std::string(lines.front().substr(0, lines.front().find(';')));
}

void SlurmResources::book(const std::vector<SlurmNode>& nodes) {
  // Every helper is submitted first and then waited for together: Slurm
  // schedules submissions at its next pass (about a second on the local
  // cluster), so booking n nodes one after the other took n passes.
  std::vector<std::pair<SlurmNode, std::string>> waiting;
  for (const SlurmNode& node : nodes) waiting.emplace_back(node, submit_helper(node));
  const auto deadline = std::chrono::steady_clock::now() + booking_timeout_;
  std::map<std::string, std::string> last_state;  // job id -> state
  for (;;) {
    std::erase_if(waiting, [&](const auto& helper) {
      // lines_of views into its text, which must outlive them.
      const std::string listed = commands_->run({"squeue", "-h", "-j", helper.second, "-o", "%T"});
      const std::vector<std::string_view> states = lines_of(listed);
      last_state[helper.second] = states.empty() ? "gone" : std::string(states.front());
      if (last_state[helper.second] != "RUNNING") return false;
      helper_jobs_[helper.first.name] = helper.second;
      held_.helpers.push_back({helper.first.name, job_.partition, helper.first.cpus, std::nullopt});
      return true;
    });
    if (waiting.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string late;
  for (const auto& [node, id] : waiting) {
    commands_->run({"scancel", id});
    late += (late.empty() ? "" : "; ") + std::string("helper job ") + id + " for node " +
            node.name + " did not start within " + std::to_string(booking_timeout_.count()) +
            " ms (" + last_state[id] + "): node not booked";
  }
  if (!late.empty()) throw Error(Errc::unsupported, late);
}

SlurmResources::~SlurmResources() {
  for (const auto& [host, id] : helper_jobs_) {
    try {
      commands_->run({"scancel", id});
    } catch (const Error&) {  // the helper ends by itself once the job is gone
    }
  }
}

void SlurmResources::launch(const std::string& host, int count,
                            const std::vector<std::string>& argv, const std::string& directory,
                            const std::string& port) {
  if (!launches_processes()) ResourceManager::launch(host, count, argv, directory, port);
  if (!helper_jobs_.contains(host)) {
    throw Error(Errc::unsupported, "no helper job holds Slurm node " + host +
                                       ": processes start only on nodes the job booked");
  }
  // Written aside and renamed, so the helper never runs half a script.
  const std::string stem = launch_directory_ + "/" + host + "." + std::to_string(++launches_);
  {
    std::ofstream script(stem + ".tmp");
    script << join_launch_script(join_, count, argv, directory, port, stem + ".log");
    if (!script.flush()) {
      throw Error(Errc::unsupported, "cannot write " + stem + ".tmp for the helper job of " + host);
    }
  }
  std::filesystem::rename(stem + ".tmp", stem + ".sh");
}

void SlurmResources::release(const std::string& host) {
  commands_->run({"scancel", helper_jobs_.at(host)});
  helper_jobs_.erase(host);
  std::erase_if(held_.helpers, [&](const NodeDescription& n) { return n.hostname == host; });
}

ResourceManagerDescriptor slurm_resources() {
  return {
      .name = "slurm",
      .help =
          "the job's Slurm allocation (inside salloc/sbatch), the partition's idle nodes, "
          "and reclaims for pending jobs of higher priority",
      .grants_bound_processes = true,
      .validate = [](std::string_view) { (void)slurm_job_from_environment(environment_variable); },
      .create = [](ResourceManagerInput input) -> std::unique_ptr<ResourceManager> {
        return std::make_unique<SlurmResources>(
            slurm_job_from_environment(environment_variable),
            std::make_unique<SystemCommandRunner>(kSlurmCommandTimeout),
            join_launch(input.settings));
      },
      .settings = join_settings(),
      .launches_processes =
          [](const StrategySettings& settings) {
            return !join_launch(settings).server_uri_file.empty();
          },
      .advise_launch = advise_slurm_launch,
      .launcher = {.version_prefix = "slurm ", .name = "Slurm's srun"}};
}

}  // namespace flexmpi
