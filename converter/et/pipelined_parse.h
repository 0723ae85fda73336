// Reads an ET file into HostOps. A compressed file is read on two threads:
// the tokenizer (gzip inflate, node boundaries, spill) fills batches of node
// texts while the calling thread parses the previous batch with simdjson, as
// inflating costs about what parsing does. A plain file is mapped and read on
// the calling thread alone: its node texts are parsed in place, batch by
// batch, right after the tokenizer found them, since without inflating or
// copying the second thread saved no wall time and cost CPU time.
#ifndef CONVERTER_ET_PIPELINED_PARSE_H_
#define CONVERTER_ET_PIPELINED_PARSE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "converter/common/host_op.h"
#include "converter/common/trace_text_source.h"
#include "converter/et/et_node_parser.h"

namespace et::convert {

// Called once, from the parsing thread, with the top-level fields seen before
// the first node (where `schema` normally is); a non-OK status stops the run.
using EarlyFieldsCheck =
    std::function<absl::Status(const std::map<std::string, std::string>&)>;

absl::Status ParseTracePipelined(
    const std::string& path, EtNodeParser* parser, TraceTextSource* text,
    const std::function<void(int64_t)>& on_progress,
    const EarlyFieldsCheck& early_check, ParsedTrace* out);

}  // namespace et::convert

#endif  // CONVERTER_ET_PIPELINED_PARSE_H_
