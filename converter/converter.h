// The converter's public entry points: PyTorch execution trace (ET JSON, plain
// or gzip, optionally linked with a Kineto trace) -> Chakra .et.
// et_convert_main.cc is a thin CLI over these; tests of other components use
// ConvertFile() to make .et inputs.
#ifndef CONVERTER_CONVERTER_H_
#define CONVERTER_CONVERTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace et::convert {

// Which host ops become nodes; see docs/et-convert.md for the policy.
enum class Granularity {
  kSimulation,  // default: ops a simulator needs, no time counted twice
  kAll,         // every ET node
};

struct ConvertOptions {
  Granularity granularity = Granularity::kSimulation;
  bool force_schema = false;  // try unknown schema versions anyway
  std::string kineto_path;    // optional Kineto trace of the same run
  int rank = -1;  // -1: from the trace (distributedInfo / pg table) or 0
  // --measured-step-ms: the step of the same program without a profiler
  // (overrides the Kineto trace's); 0 = none.
  double measured_step_ms = 0;
  bool show_progress =
      false;  // progress on stderr (the CLI sets it for a terminal)
};

// What a conversion did; printed as the summary and as --json-summary.
struct ConvertSummary {
  std::string input_path;
  std::string output_path;
  int rank = -1;  // ConvertOptions::rank
  std::string schema;
  int64_t et_nodes = 0;                                // nodes in the input
  int64_t written_nodes = 0;                           // nodes in the output
  std::map<std::string, int64_t> nodes_by_type;        // "COMP_NODE" -> count
  std::map<std::string, int64_t> collectives_by_type;  // "ALL_REDUCE" -> count
  std::map<std::string, int64_t> collective_bytes_by_type;
  std::map<std::string, int64_t> skipped_by_reason;  // reason -> count
  std::map<std::string, int64_t> unknown_ops;  // op name -> count (became COMP)
  int64_t data_deps = 0;
  int64_t ctrl_deps = 0;
  double wall_seconds = 0;
  int64_t input_bytes = 0;
  // Kineto linking (zero without --kineto).
  int64_t kineto_host_ops = 0;  // host ops that could have a Kineto twin
  int64_t kineto_host_ops_matched = 0;
  int64_t gpu_ops = 0;         // kernels, memcpys, memsets linked in
  int64_t orphan_gpu_ops = 0;  // of which without a launching host op
  // The orphans by cause ("no launch record", "launch outside matched ops"),
  // and GPU ops not linked in by reason ("other iterations", "launched before
  // the trace": the profiler's warm-up step).
  std::map<std::string, int64_t> orphan_gpu_ops_by_cause;
  std::map<std::string, int64_t> gpu_ops_left_out;
  // GPU ops of the profiler's warm-up step still running when recording began:
  // kept (no launcher, no step), so the recorded run has them and the
  // unprofiled step leaves them out.
  int64_t gpu_ops_before_trace = 0;
  std::map<int64_t, std::pair<int64_t, int64_t>>
      kineto_by_thread;               // tid -> (matched, host ops)
  std::vector<std::string> notes;     // e.g. the Kineto match; not problems
  std::vector<std::string> warnings;  // e.g. threads matched below 99%

  std::string ToText() const;  // the human summary (several lines)
  std::string ToJson() const;  // one JSON object
};

// Converts one ET file to one .et file (written atomically).
absl::StatusOr<ConvertSummary> ConvertFile(const std::string& input_path,
                                           const std::string& output_path,
                                           const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_CONVERTER_H_
