// What one conversion did (nodes, collectives, dependencies, Kineto linking,
// warnings), filled by the stages as they run and printed by the CLI as text
// or JSON. A header of its own so that stages that count into it
// (node_emitter.h, multi_rank.h) need not include converter.h. Plain values.
#ifndef CONVERTER_COMMON_CONVERT_REPORT_H_
#define CONVERTER_COMMON_CONVERT_REPORT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace et::convert {

struct GraphDigest;  // graph_digest.h

// What a conversion did; printed as the summary and as --json-summary.
struct ConvertReport {
  std::string input_path;
  std::string output_path;
  int rank = -1;  // ConvertOptions::rank
  std::string schema;
  int64_t et_nodes = 0;  // nodes in the input
  // What those input nodes are: a profiler trace converted alone has host
  // ops and GPU events, not ET nodes, and nothing to match them with.
  std::string input_units = "ET nodes";
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
  // The written graph's collectives and shape, for the cross-rank check
  // (not printed).
  std::shared_ptr<const GraphDigest> digest;

  std::string ToText() const;  // the human summary (several lines)
  std::string ToJson() const;  // one JSON object
};

}  // namespace et::convert

#endif  // CONVERTER_COMMON_CONVERT_REPORT_H_
