// A graph from a Kineto (torch.profiler) trace alone, without an execution
// trace. The trace's CPU ops (cpu_op and user_annotation events, nested by
// time on each thread) stand in for the ET's host ops: they are built as the
// ops of an ET of the nested 1.1.x schema (host_op_builder.h), with the
// record_param_comms args as the collective attributes and distributedInfo's
// process groups as the `## process_group:init ##` table, and converted with
// the Kineto trace linked as usual (converter/graph/convert_host_ops.h). Every
// CPU op has its Kineto twin, so GPU ops, sync edges and steps come from the
// existing linker unchanged. What only an ET knows (tensor ids, hence data
// dependencies) is absent; host ops keep their order on each thread.
// docs/et-convert.md, section "A Kineto trace alone", says what such a graph
// has and lacks.
#ifndef CONVERTER_KINETO_ONLY_KINETO_ONLY_IMPORT_H_
#define CONVERTER_KINETO_ONLY_KINETO_ONLY_IMPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "converter/common/convert_options.h"
#include "converter/common/convert_report.h"
#include "converter/common/host_op_builder.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_trace.h"

namespace et::convert {

// True when the start of `path` (plain or gzip) is a Kineto/Chrome trace (a
// `traceEvents` object or a bare event array) rather than an ET.
absl::StatusOr<bool> IsKinetoTrace(const std::string& path);

// What the host ops built from the trace held.
struct KinetoOnlyStats {
  int64_t cpu_ops = 0;   // host ops written (cpu_op + user_annotation)
  int64_t threads = 0;   // CPU threads they ran on
  int64_t comm_ops = 0;  // record_param_comms events with collective args
  int64_t process_groups = 0;
  int64_t ops_with_shapes = 0;      // host ops with `Input Dims`/`Input type`
  int64_t ops_with_bad_shapes = 0;  // ones whose texts are not shape lists
  // Backend work records on another thread than their call (gloo), nested
  // under it.
  int64_t work_records_nested = 0;
};

// The host ops standing for `trace`'s host side: the ops EtNodeParser would
// read from an ET of the nested 1.1.x schema holding them (one root, one op
// per thread, the process-group table, then every CPU op in start order,
// nested by time). Fails (one line naming `source`, the event and the
// problem) on a kernel, memcpy or memset without a correlation id, which
// nothing could tie to its launch.
absl::StatusOr<HostOpBuilder> BuildKinetoHostOps(
    const kineto::KinetoTrace& trace, const kineto::CpuOpNesting& nesting,
    const std::string& source, KinetoOnlyStats* stats);

// Converts a Kineto trace already parsed (or built, by the nsys import) to
// `output_path`; `source_path` names it in the summary and in errors. The
// trace is read once: its host ops are linked with this same object.
// `stats`, when given, gets what the host ops held.
absl::StatusOr<ConvertReport> ConvertKinetoTrace(
    std::shared_ptr<const kineto::KinetoTrace> trace,
    const std::string& source_path, const std::string& output_path,
    const ConvertOptions& options, KinetoOnlyStats* stats = nullptr);

// Converts a Kineto trace alone to `output_path`.
absl::StatusOr<ConvertReport> ConvertKinetoOnly(const std::string& input_path,
                                                const std::string& output_path,
                                                const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_KINETO_ONLY_KINETO_ONLY_IMPORT_H_
