// Graphs from an Nsight Systems SQLite export (`nsys export --type sqlite`,
// plain or gzip), one per GPU and process: converter/nsys reads the export
// (guarded against hostile files) and builds a Kineto trace per graph, and
// each is converted like a Kineto trace given alone (kineto_only_import.h).
// docs/et-convert.md, section "An Nsight Systems export", says what such a
// graph has and lacks.
#ifndef CONVERTER_NSYS_NSYS_IMPORT_H_
#define CONVERTER_NSYS_NSYS_IMPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/common/convert_options.h"
#include "converter/graph/rank_outputs.h"

namespace et::convert {

// True when `path` (plain or gzip) is an SQLite file: the nsys import reads
// it (and says so when it is not an nsys export).
absl::StatusOr<bool> IsNsysExport(const std::string& path);

// Converts every graph of the export: rank r (graphs in (device, pid) order)
// to `output` with %d expanded to r. `output` needs a %d when the export has
// more than one graph. Each graph is written to its staging file
// (RankResult::staged); PublishRankOutputs writes all or none. Fails as a
// whole (one line) when the export cannot be read.
absl::StatusOr<std::vector<RankResult>> ConvertNsysExport(
    const std::string& input, const std::string& output,
    const ConvertOptions& options);

// ConvertFile's path for an export: its one graph to `output` (an export with
// several graphs needs a %d pattern: et-convert's RunNsys).
absl::StatusOr<ConvertReport> ConvertNsysToOne(const std::string& input,
                                               const std::string& output,
                                               const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_NSYS_NSYS_IMPORT_H_
