// How to convert one trace: the options every conversion stage reads (which
// ops become nodes, schema checks, the Kineto trace, the rank). A header of its
// own so that the stages (keep_plan.h, node_emitter.h, multi_rank.h) need not
// include the converter's entry points in converter.h. Plain values.
#ifndef CONVERTER_COMMON_CONVERT_OPTIONS_H_
#define CONVERTER_COMMON_CONVERT_OPTIONS_H_

#include <memory>
#include <optional>
#include <string>

#include "step/host_cost.h"

namespace et::kineto {
class CpuOpNesting;
class KinetoTrace;
}  // namespace et::kineto

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
  // kineto_path already parsed (the Kineto-only and nsys imports build or
  // read it before the ET they synthesize from it), so it is not read again;
  // null: read kineto_path.
  std::shared_ptr<const kineto::KinetoTrace> kineto_trace;
  // kineto_trace's CPU-op nesting, when the import built it already; null:
  // the linker builds it.
  std::shared_ptr<const kineto::CpuOpNesting> kineto_nesting;
  // With kineto_trace from an import: the Kineto event of each synthesized
  // host op, by op id (-1 none), so the linker need not search for them.
  std::shared_ptr<const std::vector<int32_t>> kineto_event_of_id;
  int rank = -1;  // -1: from the trace (distributedInfo / pg table) or 0
  // The ranks converted together as one job (--ranks N, a folder, an nsys
  // export's graphs): the world of a trace that records none; 0 = one trace.
  int world_size = 0;
  // --measured-step-ms: the step of the same program without a profiler
  // (overrides the Kineto trace's); 0 = none.
  double measured_step_ms = 0;
  bool show_progress =
      false;  // progress on stderr (the CLI sets it for a terminal)
  // The file named in the summary and the graph's metadata when input_path is
  // an intermediate (the Kineto-only import's synthesized ET); "" = input_path.
  std::string source_path;
  // Host-side collectives without an NCCL kernel in the trace are COMP nodes
  // (the nsys import: a windowed capture cuts ranks at different points).
  bool collectives_need_kernel = false;
  // --host-profile: the unprofiled host costs learned from a light profile
  // of the same program, stored in the graph's metadata; nullopt: none.
  std::optional<HostTimeModel> host_costs;
};

}  // namespace et::convert

#endif  // CONVERTER_COMMON_CONVERT_OPTIONS_H_
