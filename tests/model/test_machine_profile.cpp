// The machine profile: good file, missing file, bad JSON, missing key,
// negative value, unknown collective, round trip, fits per library.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "flexmpi/error.hpp"
#include "model/machine_profile.hpp"

namespace flexmpi {
namespace {

std::string path_of(const std::string& name) {
  return std::string(FLEXMPI_MODEL_TEST_DIR) + "/" + name;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = path_of(name);
  std::ofstream(path) << text;
  return path;
}

// Expects load_machine_profile(path) to throw a bad_config Error naming the
// file and `needle` (a key, or what is wrong).
void expect_error(const std::string& path, const std::string& needle) {
  try {
    load_machine_profile(path);
    FAIL() << "no error for " << path;
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.code(), Errc::bad_config);
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
}

nlohmann::json good() {
  return nlohmann::json::parse(R"({
    "format": "flexmpi-machine-profile", "version": 1,
    "library": "Open MPI v4.1.4, package: Debian OpenMPI",
    "network": {
      "intra_node": {"alpha": 5e-7, "beta": 2e-10},
      "inter_node": {"alpha": 5e-5, "beta": 1e-8},
      "inter_node_measured": true,
      "gamma": 4e-10
    },
    "collectives": {"MPI_Bcast": {"latency_scale": 1.5, "bandwidth_scale": 0.8}},
    "process": {
      "spawn": [{"processes": 2, "seconds_per_process": 0.3},
                {"processes": 1, "seconds_per_process": 0.25}],
      "remove": [{"processes": 1, "seconds_per_process": 0.001}]
    },
    "redistribution": {"latency": 1e-4, "seconds_per_byte": 2e-9}
  })");
}

TEST(MachineProfile, GoodFile) {
  const std::string path = write("good.json", good().dump(2));
  const MachineProfile profile = load_machine_profile(path);
  EXPECT_EQ(profile.source, path);
  EXPECT_DOUBLE_EQ(profile.intra_node.alpha, 5e-7);
  EXPECT_DOUBLE_EQ(profile.inter_node.beta, 1e-8);
  EXPECT_TRUE(profile.inter_node_measured);
  EXPECT_DOUBLE_EQ(profile.gamma, 4e-10);
  ASSERT_EQ(profile.spawn.size(), 2u);
  EXPECT_EQ(profile.spawn[0].processes, 1);  // sorted
  EXPECT_DOUBLE_EQ(profile.remove[0].seconds_per_process, 0.001);
  EXPECT_DOUBLE_EQ(profile.redistribution_seconds_per_byte, 2e-9);
  ASSERT_EQ(profile.collectives.count(Routine::bcast), 1u);
  EXPECT_DOUBLE_EQ(profile.collectives.at(Routine::bcast).latency_scale, 1.5);
  const Hockney inter = profile.network(true);
  EXPECT_DOUBLE_EQ(inter.alpha, 5e-5);
  EXPECT_DOUBLE_EQ(inter.gamma, 4e-10);
  EXPECT_DOUBLE_EQ(profile.network(false).alpha, 5e-7);
  // Fits belong to the library they were measured with.
  EXPECT_EQ(profile.fits_for(MpiLibrary::open_mpi).size(), 1u);
  EXPECT_TRUE(profile.fits_for(MpiLibrary::mpich).empty());
}

TEST(MachineProfile, RoundTripAndDefaults) {
  const MachineProfile defaults = MachineProfile::defaults();
  EXPECT_EQ(defaults.source, "defaults");
  EXPECT_GT(defaults.intra_node.alpha, 0.0);
  EXPECT_GT(defaults.intra_node.beta, 0.0);
  EXPECT_GT(defaults.gamma, 0.0);
  EXPECT_FALSE(defaults.spawn.empty());
  EXPECT_FALSE(defaults.remove.empty());
  const std::string path = path_of("roundtrip.json");
  save_machine_profile(defaults, path);
  const MachineProfile loaded = load_machine_profile(path);
  EXPECT_DOUBLE_EQ(loaded.intra_node.alpha, defaults.intra_node.alpha);
  EXPECT_DOUBLE_EQ(loaded.redistribution_latency, defaults.redistribution_latency);
  EXPECT_EQ(loaded.spawn.size(), defaults.spawn.size());
}

TEST(MachineProfile, MissingFile) { expect_error(path_of("does-not-exist.json"), "cannot open"); }

TEST(MachineProfile, BadJson) {
  expect_error(write("bad.json", "{\"format\": "), "not valid JSON");
}

TEST(MachineProfile, MissingKey) {
  nlohmann::json document = good();
  document["network"].erase("gamma");
  expect_error(write("missing_gamma.json", document.dump()), "network.gamma");
  document = good();
  document["network"]["intra_node"].erase("beta");
  expect_error(write("missing_beta.json", document.dump()), "network.intra_node.beta");
  document = good();
  document.erase("redistribution");
  expect_error(write("missing_redistribution.json", document.dump()), "redistribution");
  document = good();
  document["process"]["spawn"][1].erase("seconds_per_process");
  expect_error(write("missing_spawn_cost.json", document.dump()),
               "process.spawn[1].seconds_per_process");
}

TEST(MachineProfile, NegativeValue) {
  nlohmann::json document = good();
  document["network"]["intra_node"]["alpha"] = -1e-6;
  expect_error(write("negative_alpha.json", document.dump()), "network.intra_node.alpha");
  document = good();
  document["redistribution"]["seconds_per_byte"] = -1;
  expect_error(write("negative_price.json", document.dump()), "redistribution.seconds_per_byte");
}

TEST(MachineProfile, OtherBadValues) {
  nlohmann::json document = good();
  document["network"]["gamma"] = "fast";
  expect_error(write("string_gamma.json", document.dump()), "network.gamma");
  document = good();
  document["collectives"]["MPI_Frobnicate"] = {{"latency_scale", 1}, {"bandwidth_scale", 1}};
  expect_error(write("unknown_collective.json", document.dump()), "collectives.MPI_Frobnicate");
  document = good();
  document["process"]["remove"] = nlohmann::json::array();
  expect_error(write("empty_remove.json", document.dump()), "process.remove");
  document = good();
  document["process"]["spawn"][0]["processes"] = 0;
  expect_error(write("zero_processes.json", document.dump()), "process.spawn[0].processes");
  document = good();
  document["format"] = "something-else";
  expect_error(write("wrong_format.json", document.dump()), "format");
}

}  // namespace
}  // namespace flexmpi
