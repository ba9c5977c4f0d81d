// The machine profile: good file, missing file, bad JSON, missing key,
// negative value, unknown collective, round trip, fits per library.
#include "model/machine_profile.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"

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
    "format": "flexmpi-machine-profile", "version": 2,
    "library": "Open MPI v4.1.4, package: Debian OpenMPI",
    "network": {
      "intra_node": {"alpha": 5e-7, "beta": 2e-10,
                     "bands": [{"up_to": 4096, "alpha": 5e-7, "beta": 3e-10},
                               {"up_to": 8388608, "alpha": 2e-6, "beta": 1e-10}]},
      "inter_node": {"alpha": 5e-5, "beta": 1e-8,
                     "bands": [{"up_to": 0, "alpha": 5e-5, "beta": 1e-8}]},
      "inter_node_measured": true,
      "gamma": 4e-10
    },
    "collectives": {"MPI_Bcast": [{"processes": 2, "points": [{"bytes": 8, "scale": 1.5},
                                                              {"bytes": 8192, "scale": 0.8}]},
                                  {"processes": 4, "points": [{"bytes": 8, "scale": 3}]}]},
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
  ASSERT_EQ(profile.collectives.at(Routine::bcast).size(), 2u);
  const CollectiveFit& fit = profile.collectives.at(Routine::bcast)[0];
  EXPECT_EQ(fit.processes, 2);
  // The fit of the nearest calibrated size (the larger on a tie).
  EXPECT_EQ(find_fit(profile.collectives, Routine::bcast, 2), &fit);
  EXPECT_EQ(find_fit(profile.collectives, Routine::bcast, 3)->processes, 4);
  EXPECT_EQ(find_fit(profile.collectives, Routine::bcast, 64)->processes, 4);
  EXPECT_EQ(find_fit(profile.collectives, Routine::gather, 2), nullptr);
  ASSERT_EQ(fit.points.size(), 2u);
  EXPECT_DOUBLE_EQ(fit.scale(8), 1.5);
  EXPECT_DOUBLE_EQ(fit.scale(8192), 0.8);
  // Bands: the last one takes any size; no bands key would be refused.
  ASSERT_EQ(profile.intra_node.bands.size(), 2u);
  const PiecewiseLink link = profile.link(false);
  EXPECT_DOUBLE_EQ(link.at(4096).beta, 3e-10);
  EXPECT_DOUBLE_EQ(link.at(1e9).beta, 1e-10);
  EXPECT_DOUBLE_EQ(link.gamma(), 4e-10);
  const Hockney inter = profile.network(true);
  EXPECT_DOUBLE_EQ(inter.alpha, 5e-5);
  EXPECT_DOUBLE_EQ(inter.gamma, 4e-10);
  EXPECT_DOUBLE_EQ(profile.network(false).alpha, 5e-7);
  // Fits belong to the library they were measured with.
  EXPECT_EQ(profile.fits_for(MpiLibrary::open_mpi).size(), 1u);  // one routine
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
  EXPECT_EQ(loaded.intra_node.bands.size(), defaults.link(false).bands().size());
  for (double bytes : {8.0, 4096.0, 65536.0, 1048576.0, 8388608.0}) {
    EXPECT_DOUBLE_EQ(loaded.link(false).at(bytes).beta, defaults.link(false).at(bytes).beta);
  }
}

TEST(MachineProfile, Version1IsRefusedWithAClearMessage) {
  nlohmann::json document = good();
  document["version"] = 1;
  expect_error(write("version1.json", document.dump()), "run flexmpi-calibrate again");
}

TEST(MachineProfile, BadBandsAndFits) {
  nlohmann::json document = good();
  document["network"]["intra_node"].erase("bands");
  expect_error(write("no_bands.json", document.dump()), "network.intra_node.bands");
  document = good();
  document["network"]["intra_node"]["bands"] = nlohmann::json::array();
  expect_error(write("empty_bands.json", document.dump()), "network.intra_node.bands");
  document = good();
  document["network"]["intra_node"]["bands"][0]["beta"] = -1;
  expect_error(write("negative_band.json", document.dump()), "network.intra_node.bands[0].beta");
  document = good();
  document["network"]["intra_node"]["bands"].push_back({{"up_to", 1}, {"alpha", 0}, {"beta", 0}});
  document["network"]["intra_node"]["bands"].push_back({{"up_to", 1}, {"alpha", 0}, {"beta", 0}});
  expect_error(write("unsorted_bands.json", document.dump()), "network.intra_node.bands[2].up_to");
  document = good();
  document["collectives"]["MPI_Bcast"][0]["points"][1]["bytes"] = 4;
  expect_error(write("unsorted_points.json", document.dump()),
               "collectives.MPI_Bcast[0].points[1].bytes");
  document = good();
  document["collectives"]["MPI_Bcast"][0]["processes"] = 1;
  expect_error(write("fit_one_process.json", document.dump()),
               "collectives.MPI_Bcast[0].processes");
  document = good();
  document["collectives"]["MPI_Bcast"][1]["processes"] = 2;
  expect_error(write("fit_same_processes.json", document.dump()),
               "collectives.MPI_Bcast[1].processes");
  document = good();
  document["collectives"]["MPI_Bcast"][0].erase("points");
  expect_error(write("fit_no_points.json", document.dump()), "collectives.MPI_Bcast[0].points");
  document = good();
  document["collectives"]["MPI_Bcast"] = nlohmann::json::object();
  expect_error(write("fit_not_array.json", document.dump()), "collectives.MPI_Bcast");
}

TEST(MachineProfile, MissingFile) { expect_error(path_of("does-not-exist.json"), "cannot open"); }

TEST(MachineProfile, BadJson) {
  expect_error(write("bad.json", "{\"format\": "), "not valid JSON");
}

// JSON allows a key twice in an object and the parser kept the last value:
// "gamma":1e300 then "gamma":3e-11 loaded as 3e-11 without a word.
TEST(MachineProfile, ADuplicateKeyIsRefusedByItsPath) {
  std::string text = good().dump();
  const std::string gamma = "\"gamma\":";
  text.insert(text.find(gamma), gamma + "1e300,");
  expect_error(write("duplicate_gamma.json", text),
               "key 'network.gamma': given twice in one object");
  text = good().dump();
  const std::string up_to = "\"up_to\":8388608";
  text.insert(text.find(up_to), up_to + ",");
  expect_error(write("duplicate_up_to.json", text),
               "key 'network.intra_node.bands[1].up_to': given twice");
  text = good().dump();
  text.insert(text.rfind('}'), ",\"format\":\"flexmpi-machine-profile\"");
  expect_error(write("duplicate_format.json", text), "key 'format': given twice");
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
  document["collectives"]["MPI_Frobnicate"] = document["collectives"]["MPI_Bcast"];
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

// Numbers out of their physical range were taken (latency 1e308
// made every prediction infinite mid-run); each is refused at load with the
// key and the range.
TEST(MachineProfile, OutOfRangeNumbersAreRefusedWithTheirRange) {
  struct Case {
    nlohmann::json::json_pointer key;
    nlohmann::json value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"/network/intra_node/alpha"_json_pointer, 1e308,
       "key 'network.intra_node.alpha': expected a number from 0 to 1, got 1e+308"},
      {"/process/spawn/0/processes"_json_pointer, 1e12,
       "key 'process.spawn[0].processes': expected an integer from 1 to 1048576, got "
       "1000000000000.0"},
      {"/process/spawn/0/processes"_json_pointer, -2,
       "expected an integer from 1 to 1048576, got -2"},
      {"/process/remove/0/processes"_json_pointer, 2.5, "process.remove[0].processes"},
      {"/network/inter_node/bands/0/beta"_json_pointer, 1.0,
       "key 'network.inter_node.bands[0].beta': expected a number from 0 to 0.001, got 1.0"},
      {"/network/intra_node/bands/0/up_to"_json_pointer, 1e16, "from 0 to 1000000000000000"},
      {"/collectives/MPI_Bcast/0/points/0/scale"_json_pointer, 1e7,
       "collectives.MPI_Bcast[0].points[0].scale': expected a number from 0 to 1000000"},
      {"/collectives/MPI_Bcast/0/points/0/bytes"_json_pointer, 0,
       "expected a number > 0 and <= 1000000000000000, got 0"},
      {"/collectives/MPI_Bcast/1/processes"_json_pointer, 1e9,
       "expected an integer from 2 to 1048576"},
      {"/process/spawn/1/seconds_per_process"_json_pointer, 1e5, "from 0 to 3600"},
      {"/redistribution/latency"_json_pointer, 1e308, "redistribution.latency"},
      {"/network/gamma"_json_pointer, 1.0, "network.gamma"},
  };
  int index = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key.to_string());
    nlohmann::json document = good();
    document[c.key] = c.value;
    expect_error(write("out_of_range" + std::to_string(index++) + ".json", document.dump()),
                 c.expected);
  }
  // The largest accepted values load.
  nlohmann::json document = good();
  document["network"]["intra_node"]["alpha"] = 1.0;
  document["process"]["spawn"][0]["processes"] = 1048576;
  document["collectives"]["MPI_Bcast"][0]["points"][0]["scale"] = 1e6;
  EXPECT_NO_THROW(load_machine_profile(write("largest.json", document.dump())));
}

}  // namespace
}  // namespace flexmpi
