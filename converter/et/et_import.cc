// An ET file -> its host ops: tokenizer -> node parser (pipelined_parse.h),
// the schema checked as early as the text allows; the graph stages
// (converter/graph/convert_host_ops.h) do the rest. See et_import.h.
#include "converter/et/et_import.h"

#include <chrono>
#include <map>
#include <memory>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "converter/common/json_text.h"
#include "converter/common/progress_line.h"
#include "converter/common/trace_text_source.h"
#include "converter/et/et_node_parser.h"
#include "converter/et/pipelined_parse.h"
#include "converter/et/schema_version.h"
#include "converter/graph/convert_host_ops.h"

namespace et::convert {
namespace {

// The schema is one the node parser reads, or --force-schema asks to try.
absl::Status CheckSchema(const std::string& path,
                         const std::map<std::string, std::string>& fields,
                         bool force) {
  const std::string schema = TopLevelString(fields, "schema");
  if (IsSupportedSchema(schema) || force) return absl::OkStatus();
  // Present but not a string (e.g. "schema": 101): say so, rather than
  // claiming the field is missing.
  if (auto it = fields.find("schema"); schema.empty() && it != fields.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: `schema` is not a string (got %s); --force-schema tries anyway",
        path, it->second.substr(0, 40)));
  }
  if (schema.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no `schema` field: not a PyTorch execution trace? "
                        "(--force-schema tries anyway)",
                        path));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: unknown execution-trace schema '%s' (supported: %s; "
                      "--force-schema tries anyway)",
                      path, schema, absl::StrJoin(SupportedSchemas(), ", ")));
}

// Step 1: every node as a compact HostOp, the schema checked as early as the
// text allows (before the first node when `schema` comes first).
absl::Status ParseTrace(const std::string& input_path,
                        const ConvertOptions& options, StringPool* pool,
                        ProgressLine* progress, TraceTextSource* text,
                        ParsedTrace* parsed, ConvertReport* summary) {
  EtNodeParser parser(input_path, pool);
  parsed->ops.reserve(
      static_cast<size_t>(summary->input_bytes / 600));  // ~500 B/node
  bool schema_checked = false;
  RETURN_IF_ERROR(ParseTracePipelined(
      input_path, &parser, text,
      [&](int64_t bytes) { progress->Update(bytes); },
      [&](const std::map<std::string, std::string>& fields) -> absl::Status {
        if (fields.count("schema") == 0)
          return absl::OkStatus();  // checked at the end
        schema_checked = true;
        return CheckSchema(input_path, fields, options.force_schema);
      },
      parsed));
  if (!schema_checked) {
    RETURN_IF_ERROR(
        CheckSchema(input_path, parsed->fields, options.force_schema));
  }
  summary->schema = TopLevelString(parsed->fields, "schema");
  summary->et_nodes = static_cast<int64_t>(parsed->ops.size());
  if (parsed->ops.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the trace has no nodes", input_path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvertReport> ConvertEtFile(const std::string& input_path,
                                            const std::string& output_path,
                                            const ConvertOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(options.show_progress, input_path);
  ConvertReport summary =
      StartReport(input_path, output_path, options, progress.total_bytes());

  // 1. Tokenize and parse every node; put linked traces in start order.
  auto pool = std::make_unique<StringPool>();
  ParsedTrace parsed;
  TraceTextSource text;
  RETURN_IF_ERROR(ParseTrace(input_path, options, pool.get(), &progress, &text,
                             &parsed, &summary));
  return ConvertParsed(input_path, output_path, options, start, &progress,
                       std::move(pool), &parsed, &text, std::move(summary));
}

}  // namespace et::convert
