// ConvertFile (converter.h): picks the importer by the input's content.
#include "base/status_macros.h"
#include "converter/converter.h"
#include "converter/et/et_import.h"
#include "converter/kineto_only/kineto_only_import.h"
#include "converter/nsys/nsys_import.h"

namespace et::convert {

absl::StatusOr<ConvertReport> ConvertFile(const std::string& input_path,
                                          const std::string& output_path,
                                          const ConvertOptions& options) {
  // A Kineto trace given alone: a graph from its host ops (recognized by
  // content, so that `et-convert trace.json out.et` and --ranks just work).
  if (options.kineto_path.empty()) {
    ASSIGN_OR_RETURN(bool kineto_only, IsKinetoTrace(input_path));
    if (kineto_only) return ConvertKinetoOnly(input_path, output_path, options);
    ASSIGN_OR_RETURN(bool nsys, IsNsysExport(input_path));
    if (nsys) return ConvertNsysToOne(input_path, output_path, options);
  }
  return ConvertEtFile(input_path, output_path, options);
}

}  // namespace et::convert
