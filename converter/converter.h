// The converter's public entry point: one input file -> Chakra .et, the format
// recognized by content: a PyTorch execution trace (converter/et, optionally
// linked with a Kineto trace: converter/kineto), a Kineto trace alone
// (converter/kineto_only) or an Nsight Systems export (converter/nsys).
// et_convert_main.cc is a thin CLI over this, multi_rank.h and the ASTRA-sim
// text converter (converter/astra_text); tests of other components use
// ConvertFile() to make .et inputs. docs/et-convert.md ("Code layout").
#ifndef CONVERTER_CONVERTER_H_
#define CONVERTER_CONVERTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "converter/common/convert_options.h"
#include "converter/common/convert_report.h"

namespace et::convert {

// Converts one input file to one .et file (written atomically).
absl::StatusOr<ConvertReport> ConvertFile(const std::string& input_path,
                                          const std::string& output_path,
                                          const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_CONVERTER_H_
