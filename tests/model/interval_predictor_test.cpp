// The whole-interval prediction (thesis eq. 5.1-5.2): each phase against its
// own formula, the communication profile replayed at the candidate's size.
#include "model/interval_predictor.hpp"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "flexmpi/error.hpp"
#include "model/reconfiguration_cost.hpp"

namespace flexmpi {
namespace {

MachineProfile profile() {
  MachineProfile p = MachineProfile::defaults();
  p.intra_node = {1e-6, 1e-9, {}};
  p.gamma = 1e-10;
  p.spawn = {{1, 0.25}};
  p.remove = {{1, 0.002}};
  p.redistribution_latency = 1e-4;
  p.redistribution_seconds_per_byte = 2e-9;
  return p;
}

CurrentState state() {
  CurrentState s;
  s.work = {100, 300};  // density 1 then 3 per row
  s.rows = {100, 100};
  s.next_work = 400;
  s.comm = {{Routine::allreduce, 2, 10, 80, 80}, {Routine::send_recv, 2, 4, 4096, 0}};
  s.lambda = 1.0;
  return s;
}

TEST(IntervalPredictor, StayingPutIsEq51) {
  const MachineProfile m = profile();
  const IntervalPredictor predictor(m, MpiLibrary::mpich, state());
  const PredictedInterval t = predictor.predict({{100, 300}, {100, 100}, 0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(t.computation, 1.0);  // both processes: 1 s
  const double allreduce = call_seconds(MpiLibrary::mpich, Routine::allreduce, 8, 2, m.link(false));
  const double send = call_seconds(MpiLibrary::mpich, Routine::send_recv, 1024, 2, m.link(false));
  EXPECT_DOUBLE_EQ(t.communication, 10 * allreduce + 4 * send);
  EXPECT_DOUBLE_EQ(t.reconfiguration, 0.0);
  EXPECT_DOUBLE_EQ(t.redistribution, 0.0);
  EXPECT_DOUBLE_EQ(t.total(), t.computation + t.communication);
}

TEST(IntervalPredictor, SpawnRebalanceAndLambdaEq52) {
  const MachineProfile m = profile();
  CurrentState s = state();
  s.lambda = 2.0;
  const IntervalPredictor predictor(m, MpiLibrary::mpich, s);
  // One process spawned; 3 blocks of 100, 50, 50 rows: work 100, 150, 150.
  const Candidate c{{100, 150, 300}, {100, 50, 50}, 1, 0, 8000, 2};
  const PredictedInterval t = predictor.predict(c);
  EXPECT_DOUBLE_EQ(t.computation, 1.0);  // 100/100, 150/150, 150/300
  // Every operation on the current world (2 processes) is priced on 3; lambda doubles it.
  const PiecewiseLink link = m.link(false);
  const double expected =
      2.0 * (10 * call_seconds(MpiLibrary::mpich, Routine::allreduce, 8, 3, link) +
             4 * call_seconds(MpiLibrary::mpich, Routine::send_recv, 1024, 3, link));
  EXPECT_DOUBLE_EQ(t.communication, expected);
  EXPECT_DOUBLE_EQ(t.reconfiguration, spawn_cost(m, 1));
  EXPECT_DOUBLE_EQ(t.redistribution, 1e-4 + 2 * 1e-6 + 8000 * 2e-9);
  EXPECT_DOUBLE_EQ(redistribution_seconds(m, 2, 8000), t.redistribution);
  const PredictedInterval removed = predictor.predict({{100}, {200}, 0, 1, 0, 0});
  EXPECT_DOUBLE_EQ(removed.reconfiguration, remove_cost(m, 1));
  EXPECT_DOUBLE_EQ(removed.computation, 4.0);
  EXPECT_DOUBLE_EQ(removed.communication, 0.0);  // one process communicates nothing
}

// Eq. 5.2 from its terms: the slowest process's work / speed, lambda x the
// replay per iteration, the reconfiguration and redistribution as given. All
// the work on the summed speed is the balanced iteration the policies price.
TEST(PredictInterval, PhasesFromTheirTerms) {
  const MachineProfile m = profile();
  const CommunicationReplay replay{state().comm, 2, 4, MpiLibrary::mpich, m.link(false), {}};
  const std::vector<double> work = {100, 300}, speeds = {100, 100};
  const PredictedInterval t = predict_interval({.work = work,
                                                .speeds = speeds,
                                                .communication = &replay,
                                                .processes = 3,
                                                .lambda = 2.0,
                                                .reconfiguration = 0.5,
                                                .redistribution = 0.25});
  EXPECT_DOUBLE_EQ(t.computation, 3.0);
  EXPECT_DOUBLE_EQ(t.communication, 2.0 * replay.per_iteration(3));
  EXPECT_GT(t.communication, 0.0);
  EXPECT_DOUBLE_EQ(t.total(), 3.0 + t.communication + 0.5 + 0.25);
  const double all = 400, summed = 200;
  EXPECT_DOUBLE_EQ(
      predict_interval({.work = std::span(&all, 1), .speeds = std::span(&summed, 1)}).total(), 2.0);
}

TEST(IntervalPredictor, BadInputIsRefused) {
  const MachineProfile m = profile();
  CurrentState s = state();
  s.rows = {100};
  EXPECT_THROW(IntervalPredictor(m, MpiLibrary::mpich, s), Error);
  s = state();
  s.lambda = -1;
  EXPECT_THROW(IntervalPredictor(m, MpiLibrary::mpich, s), Error);
  s = state();
  s.comm[0].comm_size = 0;
  EXPECT_THROW(IntervalPredictor(m, MpiLibrary::mpich, s), Error);
  const IntervalPredictor predictor(m, MpiLibrary::mpich, state());
  EXPECT_THROW((void)predictor.predict({{1}, {100, 100}, 0, 0, 0, 0}), Error);      // speeds
  EXPECT_THROW((void)predictor.predict({{1, 1}, {100, 99}, 0, 0, 0, 0}), Error);    // rows
  EXPECT_THROW((void)predictor.predict({{1, 0}, {100, 100}, 0, 0, 0, 0}), Error);   // speed 0
  EXPECT_THROW((void)predictor.predict({{1, 1}, {100, 100}, -1, 0, 0, 0}), Error);  // spawned
  EXPECT_THROW((void)predictor.predict({{1, 1}, {100, 100}, 0, 0, -5, 0}), Error);  // bytes
}

}  // namespace
}  // namespace flexmpi
