// Container ops' unread inputs, carried by their stand-in nodes.
#include "converter/graph/container_inputs.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "converter/common/json_text.h"

namespace et::convert {
namespace {

bool Touches(const OpTable& table, uint32_t op, const TensorRef& t) {
  for (auto refs : {table.inputs(op), table.outputs(op)}) {
    for (const TensorRef& r : refs)
      if (r.on_gpu == t.on_gpu && r.storage_id == t.storage_id) return true;
  }
  return false;
}

// Whether a host container reads a tensor none of its children reads or
// writes.
bool ReadsUnseenTensor(const OpTable& table, uint32_t op) {
  const auto children = table.children(op);
  for (const TensorRef& t : table.inputs(op)) {
    if (t.elem_bytes <= 0) continue;
    if (std::none_of(children.begin(), children.end(),
                     [&](uint32_t c) { return Touches(table, c, t); }))
      return true;
  }
  return false;
}

}  // namespace

ContainerInputs::ContainerInputs(const OpTable& table, const KeepPlan& plan)
    : table_(table) {
  for (uint32_t i = 0; i < table.size(); ++i) {
    if (!plan.is_container(i) || table.op(i).is_gpu() ||
        table.inputs(i).empty() || table.children(i).empty())
      continue;
    const uint32_t node = plan.stand_in(i);
    if (node == kNoOp || !plan.is_node(node) || !ReadsUnseenTensor(table, i))
      continue;
    containers_[node].push_back(i);
  }
}

absl::StatusOr<std::string> ContainerInputs::ValuesFor(
    uint32_t node, TraceTextSource* text) const {
  auto it = containers_.find(node);
  if (it == containers_.end()) return std::string();
  // One values list: the containers' items one after the other.
  std::string out = "[", values;
  for (uint32_t c : it->second) {
    ASSIGN_OR_RETURN(absl::string_view op_text, text->NodeText(table_.op(c)));
    values.clear();
    CompactJsonTo(table_.op(c).io(op_text, kInValues), &values);
    absl::string_view items = absl::StripAsciiWhitespace(values);
    if (items.size() < 2 || items.front() != '[' || items.back() != ']')
      continue;
    items = absl::StripAsciiWhitespace(items.substr(1, items.size() - 2));
    if (items.empty()) continue;
    if (out.size() > 1) out += ',';
    absl::StrAppend(&out, items);
  }
  if (out.size() == 1) return std::string();
  out += ']';
  return out;
}

}  // namespace et::convert
