// Host ops -> Chakra graph: the stages every importer's host ops go through
// (call-tree repair, linked-trace order, the optional Kineto merge, op table,
// collectives, keep plan, dependencies, node emitter, .et writer). The ET
// reader (converter/et) parses its ops and calls ConvertParsed; the Kineto-only
// and nsys imports build theirs in memory and call ConvertHostOps.
// docs/et-convert.md ("Code layout") says which folder does what.
#ifndef CONVERTER_GRAPH_CONVERT_HOST_OPS_H_
#define CONVERTER_GRAPH_CONVERT_HOST_OPS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/string_pool.h"
#include "converter/common/convert_options.h"
#include "converter/common/convert_report.h"
#include "converter/common/host_op.h"
#include "converter/common/host_op_builder.h"
#include "converter/common/progress_line.h"
#include "converter/common/trace_text_source.h"

namespace et::convert {

// The report's fields known before any reading, so that every error path
// still names its files.
ConvertReport StartReport(const std::string& input_path,
                          const std::string& output_path,
                          const ConvertOptions& options, int64_t input_bytes);

// Steps 2 to 4 on parsed (or built) host ops: Kineto linking, structure,
// output (written atomically). `summary` is StartReport's, with what reading
// the ops found.
absl::StatusOr<ConvertReport> ConvertParsed(
    const std::string& input_path, const std::string& output_path,
    const ConvertOptions& options, std::chrono::steady_clock::time_point start,
    ProgressLine* progress, std::unique_ptr<StringPool> pool,
    ParsedTrace* parsed, TraceTextSource* text, ConvertReport summary);

// Converts host ops built in memory (host_op_builder.h) as ConvertFile
// converts the ops it parses from an ET file: `builder`'s path names the
// trace in the summary and in errors.
absl::StatusOr<ConvertReport> ConvertHostOps(HostOpBuilder builder,
                                             const std::string& input_path,
                                             int64_t input_bytes,
                                             const std::string& output_path,
                                             const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_CONVERT_HOST_OPS_H_
