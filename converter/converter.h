// The converter's public entry points: PyTorch execution trace (ET JSON, plain
// or gzip, optionally linked with a Kineto trace; or a Kineto trace alone,
// kineto_only_import.h) -> Chakra .et.
// et_convert_main.cc is a thin CLI over these; tests of other components use
// ConvertFile() to make .et inputs.
#ifndef CONVERTER_CONVERTER_H_
#define CONVERTER_CONVERTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "converter/convert_options.h"
#include "converter/convert_report.h"
#include "converter/host_op_builder.h"

namespace et::convert {

// Converts one ET file to one .et file (written atomically).
absl::StatusOr<ConvertReport> ConvertFile(const std::string& input_path,
                                          const std::string& output_path,
                                          const ConvertOptions& options);

// Converts host ops built in memory (host_op_builder.h) as ConvertFile
// converts the ops it parses from an ET file: `builder`'s path names the
// trace in the summary and in errors.
absl::StatusOr<ConvertReport> ConvertHostOps(HostOpBuilder builder,
                                             const std::string& input_path,
                                             int64_t input_bytes,
                                             const std::string& output_path,
                                             const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_CONVERTER_H_
