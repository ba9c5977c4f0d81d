// The Slurm resource manager on outputs recorded from the local
// cluster of scripts/slurm-local.sh (fixtures/README.md): Slurm's environment
// read or refused by name, sinfo/squeue/scontrol parsed, idle nodes offered,
// helper nodes reclaimed for a pending job of higher priority, the current
// allocation kept when slurmctld does not answer; and the command runner.
#include "resources/slurm/slurm_resources.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "flexmpi/error.hpp"
#include "resources/command_runner.hpp"
#include "resources/slurm/slurm_launch.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  return read_text_file(std::string(FLEXMPI_SLURM_FIXTURES) + "/" + name, "fixture",
                        Errc::internal);
}

// Answers each command line with a recorded output, or fails as a command
// whose slurmctld is down; logs every command it is asked.
class RecordedCommands final : public CommandRunner {
 public:
  explicit RecordedCommands(std::map<std::string, std::string> outputs,
                            std::vector<std::string>* log)
      : outputs_(std::move(outputs)), log_(log) {}
  [[nodiscard]] std::string run(const std::vector<std::string>& argv) const override {
    const std::string line = command_line(argv);
    log_->push_back(line);
    const auto output = outputs_.find(line);
    if (output != outputs_.end()) return output->second;
    throw Error(Errc::unsupported, "'" + line +
                                       "' failed (exit status 1): Unable to contact "
                                       "slurm controller (connect failure)");
  }

 private:
  std::map<std::string, std::string> outputs_;
  std::vector<std::string>* log_;
};

const std::string kSinfo = "sinfo -h -N -p flex -o %N|%T|%c";
const std::string kSqueue = "squeue -h -p flex -o %i|%T|%Q|%D|%j";
const std::string kBookN2 =
    "sbatch --parsable -p flex -N 1 -w n2 -J flexmpi-helper-7 -o /dev/null --wrap " +
    helper_job_script("7", 10);

SlurmJob job_on_n1() { return {"7", "flex", "n1", {1}}; }

std::vector<std::pair<std::string, int>> pes(const SystemStatus& status) {
  std::vector<std::pair<std::string, int>> out;
  for (const NodeDescription& node : status.nodes) {
    out.emplace_back(node.hostname, node.processing_elements);
  }
  return out;
}

TEST(SlurmEnvironment, ReadsTheJob) {
  const std::map<std::string, std::string> env{{"SLURM_JOB_ID", "12"},
                                               {"SLURM_JOB_PARTITION", "flex"},
                                               {"SLURM_JOB_NODELIST", "n[1-3]"},
                                               {"SLURM_JOB_CPUS_PER_NODE", "2(x2),1"}};
  const SlurmJob job = slurm_job_from_environment([&](const char* name) -> const char* {
    const auto value = env.find(name);
    return value == env.end() ? nullptr : value->second.c_str();
  });
  EXPECT_EQ(job.id, "12");
  EXPECT_EQ(job.partition, "flex");
  EXPECT_EQ(job.node_list, "n[1-3]");
  EXPECT_THAT(job.cpus_per_node, ElementsAre(2, 2, 1));
}

TEST(SlurmEnvironment, OutsideAJobNamesTheMissingVariable) {
  try {
    (void)slurm_job_from_environment([](const char*) -> const char* { return nullptr; });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("SLURM_JOB_ID is not set: run inside salloc or sbatch"));
  }
}

TEST(SlurmEnvironment, SettingRefusedOutsideAJob) {
  unsetenv("SLURM_JOB_ID");
  EXPECT_THAT([] { validate_resources_setting("slurm"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("SLURM_JOB_ID is not set")));
  EXPECT_THAT(
      [] { validate_resources_setting("torque"); },
      ::testing::ThrowsMessage<Error>(HasSubstr("expected hostfile, scenario:FILE, slurm")));
}

TEST(SlurmEnvironment, CpusPerNodeMalformed) {
  EXPECT_THAT(parse_cpus_per_node("4"), ElementsAre(4));
  for (const char* bad : {"", "2(x", "2(x0)", "x(x2)", "2,,1", "-1"}) {
    EXPECT_THROW((void)parse_cpus_per_node(bad), Error) << bad;
  }
}

TEST(SlurmParsers, RecordedOutputs) {
  EXPECT_THAT(parse_hostnames(fixture("scontrol_hostnames.txt")), ElementsAre("n1", "n2", "n4"));
  EXPECT_THAT(parse_sinfo_nodes(fixture("sinfo_helper_on_n2.txt")),
              ElementsAre(SlurmNode{"n1", "allocated", 1}, SlurmNode{"n2", "allocated", 1},
                          SlurmNode{"n3", "idle", 1}, SlurmNode{"n4", "idle", 1}));
  EXPECT_THAT(parse_squeue_jobs(fixture("squeue_urgent_pending.txt")),
              ElementsAre(SlurmQueuedJob{"9", "PENDING", 100000, 3, "urgent"},
                          SlurmQueuedJob{"10", "PENDING", 1, 1, "later"},
                          SlurmQueuedJob{"8", "RUNNING", 1, 1, "flexmpi-helper-7"},
                          SlurmQueuedJob{"7", "RUNNING", 1, 1, "flexjob"}));
}

TEST(SlurmParsers, MalformedLineIsNamed) {
  EXPECT_THAT([] { (void)parse_sinfo_nodes("n1|idle\n"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("sinfo printed 'n1|idle'")));
  EXPECT_THAT([] { (void)parse_squeue_jobs("7|RUNNING|high|1|job\n"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("'high' is not a count")));
}

TEST(SlurmPlan, OffersIdleNodesWhenNobodyWaits) {
  const SlurmHoldings held{{{"n1", "flex", 1, std::nullopt}}, {{"n2", "flex", 1, std::nullopt}}};
  const SystemStatus status =
      plan_slurm_status(job_on_n1(), held, parse_sinfo_nodes(fixture("sinfo_helper_on_n2.txt")),
                        parse_squeue_jobs(fixture("squeue_no_pending.txt")));
  EXPECT_THAT(
      pes(status),
      ElementsAre(std::pair<std::string, int>{"n1", 1}, std::pair<std::string, int>{"n2", 1},
                  std::pair<std::string, int>{"n3", 1}, std::pair<std::string, int>{"n4", 1}));
  EXPECT_EQ(status.nodes.back().proc_type, "flex");
}

TEST(SlurmPlan, HigherPriorityJobReclaimsWhatTheIdleNodesLack) {
  // Job 9 (priority 100000) wants 3 nodes, 2 are idle: the helper node n2
  // goes (0 PEs), the allocation's n1 stays; job 10 (priority 1, as ours) waits.
  const SlurmHoldings held{{{"n1", "flex", 1, std::nullopt}}, {{"n2", "flex", 1, std::nullopt}}};
  const SystemStatus status =
      plan_slurm_status(job_on_n1(), held, parse_sinfo_nodes(fixture("sinfo_helper_on_n2.txt")),
                        parse_squeue_jobs(fixture("squeue_urgent_pending.txt")));
  EXPECT_THAT(pes(status), ElementsAre(std::pair<std::string, int>{"n1", 1},
                                       std::pair<std::string, int>{"n2", 0}));
}

TEST(SlurmPlan, OwnJobMissingFromSqueue) {
  EXPECT_THAT(
      [] {
        (void)plan_slurm_status({"99", "flex", "n1", {1}}, {}, {},
                                parse_squeue_jobs(fixture("squeue_no_pending.txt")));
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("squeue does not list job 99")));
}

TEST(SlurmResourcesTest, BooksAndReleasesHelperNodes) {
  std::vector<std::string> log;
  SlurmResources slurm(job_on_n1(), std::make_unique<RecordedCommands>(
                                        std::map<std::string, std::string>{
                                            {"scontrol show hostnames n1", "n1\n"},
                                            {kSinfo, fixture("sinfo_all_idle.txt")},
                                            {kSqueue, fixture("squeue_no_pending.txt")},
                                            {kBookN2, fixture("sbatch_helper.txt")},
                                            {"squeue -h -j 8 -o %T", "RUNNING\n"},
                                            {"scancel 8", ""}},
                                        &log));
  slurm.submit_allocation({{"n1", 1}, {"n2", 1}});
  EXPECT_THAT(log,
              ElementsAre("scontrol show hostnames n1", kSinfo, kBookN2, "squeue -h -j 8 -o %T"));
  EXPECT_THAT(pes(slurm.status(1)), ::testing::Contains(std::pair<std::string, int>{"n2", 1}));
  slurm.submit_allocation({{"n1", 1}});
  EXPECT_EQ(log.back(), "scancel 8");
  EXPECT_EQ(slurm.status(2).warning, "");
}

// Two nodes: both helpers are submitted before either is waited for (Slurm
// starts submissions at its next scheduling pass: one pass, not two).
TEST(SlurmResourcesTest, BooksSeveralNodesInOnePass) {
  std::vector<std::string> log;
  const std::string book_n3 =
      "sbatch --parsable -p flex -N 1 -w n3 -J flexmpi-helper-7 -o /dev/null --wrap " +
      helper_job_script("7", 10);
  SlurmResources slurm(
      job_on_n1(), std::make_unique<RecordedCommands>(
                       std::map<std::string, std::string>{{"scontrol show hostnames n1", "n1\n"},
                                                          {kSinfo, fixture("sinfo_all_idle.txt")},
                                                          {kBookN2, "8\n"},
                                                          {book_n3, "9;cluster\n"},
                                                          {"squeue -h -j 8 -o %T", "RUNNING\n"},
                                                          {"squeue -h -j 9 -o %T", "RUNNING\n"}},
                       &log));
  slurm.submit_allocation({{"n1", 1}, {"n2", 1}, {"n3", 1}});
  EXPECT_THAT(log, ElementsAre("scontrol show hostnames n1", kSinfo, kBookN2, book_n3,
                               "squeue -h -j 8 -o %T", "squeue -h -j 9 -o %T"));
}

// The job ends holding a helper node: the helper job is ended with it.
TEST(SlurmResourcesTest, HelperJobsEndWithTheJob) {
  std::vector<std::string> log;
  {
    SlurmResources slurm(
        job_on_n1(), std::make_unique<RecordedCommands>(
                         std::map<std::string, std::string>{{"scontrol show hostnames n1", "n1\n"},
                                                            {kSinfo, fixture("sinfo_all_idle.txt")},
                                                            {kBookN2, fixture("sbatch_helper.txt")},
                                                            {"squeue -h -j 8 -o %T", "RUNNING\n"},
                                                            {"scancel 8", ""}},
                         &log));
    slurm.submit_allocation({{"n1", 1}, {"n2", 1}});
    ASSERT_NE(log.back(), "scancel 8");
  }
  EXPECT_EQ(log.back(), "scancel 8");
}

// The helper job's script, run by bash against a stand-in squeue that answers
// from a list: it holds the node while the job is listed or squeue fails, and
// ends when squeue lists nothing or does not know the job.
// `before(dir)` runs first (the launch test leaves scripts there); with a
// `launch_node`, the helper runs that node's scripts in `dir`.
int helper_script_polls(const std::vector<std::string>& answers,
                        const std::function<void(const std::filesystem::path&)>& before = {},
                        const std::string& launch_node = {}) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("flexmpi_helper_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);  // the stand-in squeue counts its calls there
  std::filesystem::create_directories(dir);
  if (before) before(dir);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    std::ofstream(dir / ("answer" + std::to_string(i))) << answers[i];
  }
  // "FAIL:text" answers text on stderr with exit status 1.
  std::ofstream(dir / "squeue")
      << "#!/bin/sh\n"
      << "n=$(cat " << (dir / "calls").string() << " 2>/dev/null || echo 0)\n"
      << "echo $((n + 1)) > " << (dir / "calls").string() << "\n"
      << "a=$(cat " << dir.string() << "/answer$n)\n"
      << "case \"$a\" in FAIL:*) echo \"${a#FAIL:}\" >&2; exit 1 ;; esac\n"
      << "[ -n \"$a\" ] && echo \"$a\"; exit 0\n";
  std::filesystem::permissions(dir / "squeue", std::filesystem::perms::owner_all);
  SystemCommandRunner runner(std::chrono::seconds(10));
  (void)runner.run(
      {"env", "PATH=" + dir.string() + ":/usr/bin:/bin", "sh", "-c",
       helper_job_script(
           "7", 0, launch_node.empty() ? std::string() : (dir / (launch_node + ".")).string())});
  std::ifstream calls(dir / "calls");
  int count = 0;
  calls >> count;
  return count;
}

TEST(SlurmHelperJob, HoldsTheNodeWhileTheJobExists) {
  EXPECT_EQ(
      helper_script_polls({"RUNNING", "FAIL:Unable to contact slurm controller", "RUNNING", ""}),
      4);
  EXPECT_EQ(
      helper_script_polls({"RUNNING", "FAIL:slurm_load_jobs error: Invalid job id specified"}), 2);
  std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                              ("flexmpi_helper_" + std::to_string(::getpid())));
}

// A joining helper runs its own node's launch scripts, each once, and
// renames them; another node's are not its.
TEST(SlurmHelperJob, RunsItsNodesLaunchScriptsOnce) {
  std::filesystem::path dir;
  EXPECT_EQ(helper_script_polls(
                {"RUNNING", "RUNNING", "RUNNING", ""},
                [&](const std::filesystem::path& d) {
                  dir = d;
                  std::ofstream(d / "n3.1.sh") << "echo one >> " << (d / "ran").string() << "\n";
                  std::ofstream(d / "n3.2.sh") << "echo two >> " << (d / "ran").string() << "\n";
                  std::ofstream(d / "n31.1.sh") << "echo other >> " << (d / "ran").string() << "\n";
                },
                "n3"),
            4);
  std::ifstream ran(dir / "ran");
  std::vector<std::string> lines;
  for (std::string line; std::getline(ran, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_THAT(lines, ElementsAre("one", "two"));
  EXPECT_TRUE(std::filesystem::exists(dir / "n3.1.sh.run"));
  EXPECT_TRUE(std::filesystem::exists(dir / "n31.1.sh"));
  std::filesystem::remove_all(dir);
}

// The script a helper job runs to start joining processes: the submitting MPI
// job's variables go, the user's Open MPI settings stay, mpiexec gets
// ompi-server and the port, the program's arguments arrive untouched.
TEST(SlurmHelperJob, LaunchScriptStartsJoiningProcessesOutsideTheJobsEnvironment) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("flexmpi_launch_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // A stand-in mpiexec that prints its arguments and the variables that matter.
  std::ofstream(dir / "mpiexec") << "#!/bin/sh\n"
                                 << "for a in \"$@\"; do echo \"arg:$a\"; done\n"
                                 << "env | grep -E '^(PMIX|OMPI)_' | sort\n";
  std::filesystem::permissions(dir / "mpiexec", std::filesystem::perms::owner_all);
  const std::string script = join_launch_script(
      {"/shared/ompi-server.uri", (dir / "mpiexec").string()}, 2, {"/bin/app", "a b", "it's"},
      dir.string(), "12.0:34", (dir / "out").string());
  SystemCommandRunner runner(std::chrono::seconds(10));
  (void)runner.run({"env", "-i", "PATH=/usr/bin:/bin", "PMIX_RANK=0", "OMPI_COMM_WORLD_RANK=0",
                    "OMPI_MCA_orte_hnp_uri=x", "OMPI_MCA_ess_base_jobid=1", "OMPI_MCA_btl=self,tcp",
                    "OMPI_ALLOW_RUN_AS_ROOT=1", "sh", "-c", script});
  std::ifstream out(dir / "out");
  std::vector<std::string> lines;
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  EXPECT_THAT(
      lines, ElementsAre("arg:--ompi-server", "arg:file:/shared/ompi-server.uri", "arg:-n", "arg:2",
                         "arg:env", "arg:FLEXMPI_JOIN_PORT=12.0:34", "arg:/bin/app", "arg:a b",
                         "arg:it's", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_MCA_btl=self,tcp"));
  std::filesystem::remove_all(dir);
}

// Join mode: a helper job books the node and runs what launch() leaves for
// it; a node the job does not hold is refused, naming it.
TEST(SlurmResourcesTest, LaunchesOnlyOnBookedNodes) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("flexmpi_join_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "uri") << "1.0;tcp://127.0.0.1:1\n";
  const std::string scripts = (dir / "flexmpi-join-7").string();
  const std::string book_n2 =
      "sbatch --parsable -p flex -N 1 -w n2 -J flexmpi-helper-7 -o /dev/null --wrap " +
      helper_job_script("7", 10, scripts + "/n2.");
  std::vector<std::string> log;
  SlurmResources slurm(
      job_on_n1(),
      std::make_unique<RecordedCommands>(
          std::map<std::string, std::string>{{"scontrol show hostnames n1", "n1\n"},
                                             {kSinfo, fixture("sinfo_all_idle.txt")},
                                             {book_n2, fixture("sbatch_helper.txt")},
                                             {"squeue -h -j 8 -o %T", "RUNNING\n"},
                                             {"scancel 8", ""}},
          &log),
      JoinLaunch{(dir / "uri").string(), "mpiexec"});
  StrategySettings join;
  join.set("FLEXMPI_SLURM_JOIN", (dir / "uri").string(), (dir / "uri").string());
  EXPECT_TRUE(resources_launch_processes("slurm", join));
  EXPECT_FALSE(resources_launch_processes("slurm", StrategySettings()));
  try {
    slurm.launch("n2", 1, {"/bin/app"}, "/", "12.0:34");
    ADD_FAILURE() << "launched on a node no helper job holds";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_THAT(e.what(), HasSubstr("n2"));
  }
  slurm.submit_allocation({{"n1", 1}, {"n2", 1}});
  slurm.launch("n2", 1, {"/bin/app"}, "/", "12.0:34");
  const std::string script = read_text_file(scripts + "/n2.1.sh", "launch script", Errc::internal);
  EXPECT_THAT(script, HasSubstr("FLEXMPI_JOIN_PORT=12.0:34 /bin/app"));
  EXPECT_FALSE(std::filesystem::exists(scripts + "/n2.1.tmp"));
  std::filesystem::remove_all(dir);
}

// A node that never comes up: its helper job stays pending, is cancelled,
// and the node is not held.
TEST(SlurmResourcesTest, AHelperJobThatDoesNotStartIsCancelled) {
  std::vector<std::string> log;
  SlurmResources slurm(
      job_on_n1(),
      std::make_unique<RecordedCommands>(
          std::map<std::string, std::string>{{"scontrol show hostnames n1", "n1\n"},
                                             {kSinfo, fixture("sinfo_all_idle.txt")},
                                             {kSqueue, fixture("squeue_no_pending.txt")},
                                             {kBookN2, fixture("sbatch_helper.txt")},
                                             {"squeue -h -j 8 -o %T", "PENDING\n"},
                                             {"scancel 8", ""}},
          &log),
      JoinLaunch{}, std::chrono::milliseconds(250));
  slurm.submit_allocation({{"n1", 1}, {"n2", 1}});
  EXPECT_EQ(log.back(), "scancel 8");
  EXPECT_GE(std::count(log.begin(), log.end(), "squeue -h -j 8 -o %T"), 2);  // it waited
  const SystemStatus status = slurm.status(1);
  EXPECT_THAT(status.warning,
              HasSubstr("helper job 8 for node n2 did not start within 250 ms (PENDING)"));
  slurm.submit_allocation({{"n1", 1}});  // n2 was never held: nothing to cancel
  EXPECT_EQ(std::count(log.begin(), log.end(), "scancel 8"), 1);
}

TEST(SlurmResourcesTest, UnreachableControllerKeepsTheAllocation) {
  std::vector<std::string> log;
  SlurmResources slurm(
      job_on_n1(),
      std::make_unique<RecordedCommands>(
          std::map<std::string, std::string>{{"scontrol show hostnames n1", "n1\n"}}, &log));
  const SystemStatus status = slurm.status(3);
  EXPECT_THAT(pes(status), ElementsAre(std::pair<std::string, int>{"n1", 1}));
  EXPECT_THAT(status.warning, HasSubstr("'" + kSinfo + "' failed"));
  EXPECT_THAT(status.warning, HasSubstr("Unable to contact slurm controller"));
  EXPECT_THAT(status.warning, HasSubstr("the job keeps the nodes it holds"));
  slurm.submit_allocation({{"n1", 1}, {"n2", 1}});
  EXPECT_THAT(slurm.status(4).nodes, ::testing::SizeIs(1));  // n2 not booked
}

TEST(SlurmResourcesTest, NodeListAndCpusDisagree) {
  std::vector<std::string> log;
  EXPECT_THAT(
      [&] {
        SlurmResources slurm(
            {"7", "flex", "n[1-2],n4", {1, 1}},
            std::make_unique<RecordedCommands>(
                std::map<std::string, std::string>{
                    {"scontrol show hostnames n[1-2],n4", fixture("scontrol_hostnames.txt")}},
                &log));
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("names 3 nodes, SLURM_JOB_CPUS_PER_NODE 2")));
}

// On a real cluster the processes report the allocation's node names; on
// the local cluster every node is localhost and the processes report this
// machine's name: they are placed CPU by CPU, as mpirun fills the nodes,
// and a spawn must not name its host to MPI.
TEST(SlurmResourcesTest, PlacesInitialProcessesWhereNodeNamesAreNotHostNames) {
  std::vector<std::string> log;
  SlurmResources slurm(
      {"7", "flex", "n[1-2]", {2, 1}},
      std::make_unique<RecordedCommands>(
          std::map<std::string, std::string>{{"scontrol show hostnames n[1-2]", "n1\nn2\n"}},
          &log));
  EXPECT_TRUE(slurm.spawn_names_hosts());
  EXPECT_THAT(slurm.place_initial_processes({"n2", "n1", "n1"}), ElementsAre("n2", "n1", "n1"));
  EXPECT_TRUE(slurm.spawn_names_hosts());
  EXPECT_THAT(slurm.place_initial_processes({"vm", "vm", "vm"}), ElementsAre("n1", "n1", "n2"));
  EXPECT_FALSE(slurm.spawn_names_hosts());
  EXPECT_THAT(
      [&] {
        (void)slurm.place_initial_processes({"vm", "vm", "vm", "vm"});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("the allocation's nodes (whose names are not host names) have 3 PEs "
                    "for the 4 processes")));
}

// flexrun's launch inside an allocation (slurm_launch_advice).
class SlurmLaunchTest : public ::testing::Test {
 protected:
  LaunchSituation situation(bool open_mpi, bool changes_processes) {
    return {.variable = [this](const std::string& name) -> const std::string* {
              const auto found = environment_.find(name);
              return found == environment_.end() ? nullptr : &found->second;
            },
            .open_mpi = open_mpi,
            .policy_changes_processes = changes_processes};
  }
  std::map<std::string, std::string> environment_;
  SlurmAllocation local_{"42", {"localhost"}, 2, false};
};

TEST_F(SlurmLaunchTest, LocalClusterRunsOnThisMachine) {
  environment_["SLURM_CONF"] = "/tmp/slurm.conf";
  const LaunchAdvice advice = slurm_launch_advice(situation(true, true), local_);
  std::vector<std::string> defaults;
  for (const LaunchDefault& d : advice.defaults) defaults.push_back(d.variable + "=" + d.value);
  EXPECT_THAT(defaults,
              ElementsAre("FLEXMPI_RESOURCES=slurm", "OMPI_MCA_ras=^slurm", "OMPI_MCA_plm=^slurm"));
  EXPECT_THAT(advice.defaults[1].why, HasSubstr("(localhost) are not host names"));
  EXPECT_THAT(advice.exported, ElementsAre("SLURM_CONF"));
  EXPECT_EQ(advice.processes, 2);
  EXPECT_THAT(advice.processes_why, HasSubstr("Slurm job 42"));
  EXPECT_TRUE(advice.launcher_arguments.empty());
}

TEST_F(SlurmLaunchTest, RealNodesAndStaticPolicyLeaveMpirunAlone) {
  SlurmAllocation cluster = local_;
  cluster.nodes_are_hosts = true;
  const LaunchAdvice advice = slurm_launch_advice(situation(true, false), cluster);
  EXPECT_TRUE(advice.defaults.empty());
  EXPECT_TRUE(advice.exported.empty());  // no SLURM_CONF in the environment
  EXPECT_EQ(advice.processes, 0);
  // MPICH's Hydra: only the policy's resource manager.
  EXPECT_EQ(slurm_launch_advice(situation(false, true), local_).defaults.size(), 1u);
}

TEST_F(SlurmLaunchTest, JoinGivesMpiexecTheServerUriWithOpenMpiOnly) {
  environment_["FLEXMPI_SLURM_JOIN"] = "/shared/uri";
  EXPECT_THAT(slurm_launch_advice(situation(true, false), std::nullopt).launcher_arguments,
              ElementsAre("--ompi-server", "file:/shared/uri"));
  const LaunchAdvice hydra = slurm_launch_advice(situation(false, false), std::nullopt);
  EXPECT_TRUE(hydra.launcher_arguments.empty());
  EXPECT_THAT(hydra.notes, ElementsAre(HasSubstr("needs Open MPI")));
  EXPECT_TRUE(slurm_launch_advice(situation(true, true), std::nullopt).defaults.empty());
}

TEST_F(SlurmLaunchTest, UnreadableAllocationIsAWarning) {
  environment_["SLURM_JOB_ID"] = "42";  // the rest of Slurm's environment missing
  const LaunchAdvice advice = advise_slurm_launch(situation(true, true));
  EXPECT_THAT(advice.warnings, ElementsAre(HasSubstr("inside Slurm job 42 but its allocation")));
  EXPECT_TRUE(advice.defaults.empty());
}

TEST(SlurmLaunch, SrunIsABatchLauncher) {
  const BatchLauncher* srun = find_batch_launcher("slurm 22.05.8\n");
  ASSERT_NE(srun, nullptr);
  EXPECT_EQ(srun->name, "Slurm's srun");
  EXPECT_EQ(find_batch_launcher("mpiexec (OpenRTE) 4.1.4"), nullptr);
}

TEST(CommandRunner, OutputOfACommand) {
  const SystemCommandRunner runner(std::chrono::seconds(10));
  EXPECT_EQ(runner.run({"printf", "a|b\n"}), "a|b\n");
}

TEST(CommandRunner, FailureNamesCommandStatusAndStderr) {
  const SystemCommandRunner runner(std::chrono::seconds(10));
  EXPECT_THAT(
      [&] {
        (void)runner.run({"sh", "-c", "echo down >&2; exit 3"});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("'sh -c echo down >&2; exit 3' failed (exit status 3): down")));
  EXPECT_THAT([&] { (void)runner.run({"flexmpi-no-such-command"}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("cannot run 'flexmpi-no-such-command'")));
}

TEST(CommandRunner, TimeoutKillsTheCommand) {
  const SystemCommandRunner runner(std::chrono::milliseconds(200));
  EXPECT_THAT(
      [&] {
        (void)runner.run({"sleep", "10"});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("no answer within 200 ms")));
}

}  // namespace
}  // namespace flexmpi
