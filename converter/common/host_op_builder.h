// HostOps made in memory, for imports that have no ET file (a Kineto trace
// alone, an Nsight Systems export): the records EtNodeParser would make of the
// same nodes, without writing an ET JSON and parsing it back (which was ~18%
// of an nsys conversion's CPU time). The IOInfo texts the later stages read
// (TraceTextSource::NodeText, HostOp::io) are kept in one string: every op
// without recorded shapes shares one range of empty lists, so a trace of a
// million ops without shapes holds a few bytes of text.
#ifndef CONVERTER_COMMON_HOST_OP_BUILDER_H_
#define CONVERTER_COMMON_HOST_OP_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/string_pool.h"
#include "converter/common/host_op.h"

namespace et::convert {

// An op's inputs as the ET spells them (JSON texts; "" = no strides). Its
// outputs are always empty lists.
struct HostOpInputs {
  absl::string_view values = "[]";
  absl::string_view shapes = "[]";
  absl::string_view types = "[]";
  absl::string_view strides;
};

class HostOpBuilder {
 public:
  // `path` names the trace in errors; `ops_hint` is the number of ops to come.
  HostOpBuilder(std::string path, size_t ops_hint);

  // Appends an op in file order, as the parser would read the node
  // {"id", "name", "ctrl_deps": parent, "inputs", "outputs": empty,
  //  "attrs": [tid, ...]}; attributes follow with Add*Attr. Fails on a name
  // over the limit on one string, as the parser does.
  absl::Status Add(uint64_t id, absl::string_view name, uint64_t parent,
                   int64_t tid, const HostOpInputs& inputs);
  // An attribute of the last op added (no HostOp field of its own).
  void AddStringAttr(absl::string_view name, absl::string_view value);
  void AddIntAttr(absl::string_view name, int64_t value);

  // The top-level fields the tokenizer would have kept: raw JSON texts.
  void SetField(const std::string& key, std::string json_text);

  size_t size() const { return parsed_.ops.size(); }
  std::unique_ptr<StringPool> TakePool() { return std::move(pool_); }
  ParsedTrace TakeParsed() { return std::move(parsed_); }
  // The texts the ops' ranges point into (TraceTextSource::UseText).
  std::string TakeText() { return std::move(text_); }

 private:
  std::string path_;
  std::unique_ptr<StringPool> pool_;
  ParsedTrace parsed_;
  std::string text_;
};

}  // namespace et::convert

#endif  // CONVERTER_COMMON_HOST_OP_BUILDER_H_
