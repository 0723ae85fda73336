// PyTorch execution traces (ET JSON, schema 1.0.x / 1.1.x, plain or gzip, as
// torch.profiler's ExecutionTraceObserver writes them; also Chakra's linked
// "ET+" files) -> Chakra .et. This folder reads the file into host ops: the
// tokenizer (et_json_tokenizer.h) finds the nodes, the node parser
// (et_node_parser.h) makes each a HostOp, pipelined_parse.h runs both, and
// schema_version.h says which schemas are read. The graph stages
// (converter/graph) do the rest, with the Kineto trace of the same run
// (converter/kineto) when one is given. docs/et-convert.md, sections "Inputs"
// and "What each ET node becomes", documents the format as read.
#ifndef CONVERTER_ET_ET_IMPORT_H_
#define CONVERTER_ET_ET_IMPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "converter/common/convert_options.h"
#include "converter/common/convert_report.h"

namespace et::convert {

// Converts one ET file (options.kineto_path: its Kineto trace, "" none) to one
// .et file (written atomically).
absl::StatusOr<ConvertReport> ConvertEtFile(const std::string& input_path,
                                            const std::string& output_path,
                                            const ConvertOptions& options);

}  // namespace et::convert

#endif  // CONVERTER_ET_ET_IMPORT_H_
