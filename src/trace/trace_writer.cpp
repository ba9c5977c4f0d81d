#include "trace/trace_writer.hpp"

namespace flexmpi {

nlohmann::json interval_record(const IntervalReport& report, double dedicated_threshold,
                               double imbalance_threshold) {
  nlohmann::json computation = nlohmann::json::array(), cpu = nlohmann::json::array(),
                 wall = nlohmann::json::array(), mpi = nlohmann::json::array(),
                 metric = nlohmann::json::array(), speed = nlohmann::json::array(),
                 effective = nlohmann::json::array(), bytes = nlohmann::json::array(),
                 late = nlohmann::json::array(), communication = nlohmann::json::array();
  for (const ProcessInterval& p : report.processes) {
    computation.push_back(p.computation());
    cpu.push_back(p.cpu);
    wall.push_back(p.wall);
    mpi.push_back(p.mpi);
    metric.push_back(p.metric);
    effective.push_back(p.effective_computation(dedicated_threshold));
    speed.push_back(p.speed(dedicated_threshold));
    bytes.push_back(p.bytes_sent + p.bytes_received);
    late.push_back(p.emulation_late_iterations);
    communication.push_back(p.node_communication_power);
  }
  return {
      {"interval", report.index},
      {"first_iteration", report.first_iteration},
      {"iterations", report.processes.empty() ? 0 : report.processes.front().iterations},
      {"nprocs", report.processes.size()},
      {"metric", report.metric_name},
      {"computation_time", computation},
      {"effective_time", effective},
      {"cpu_time", cpu},
      {"wall_time", wall},
      {"mpi_time", mpi},
      {"metric_count", metric},
      {"speed", speed},
      {"mpi_bytes", bytes},
      {"emulation_late_iterations", late},
      {"node_communication_power", communication},
      {"shared", report.shared_flags(dedicated_threshold)},
      {"imbalance", report.imbalance(dedicated_threshold)},
      {"imbalance_threshold", imbalance_threshold},
      {"decision", "none"},
  };
}

TraceWriter::TraceWriter(const std::string& path) : file_("FLEXMPI_TRACE", path) {}

void TraceWriter::write(const nlohmann::json& record) { file_.append(record.dump() + "\n"); }

}  // namespace flexmpi
