// A synthesized layout's change to one op's cost (see the header).
#include "scaleout/scaled_cost.h"

#include <optional>

#include "absl/strings/string_view.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et::scaleout {
namespace {

void ScaleAttr(ChakraProtoMsg::Node* node, absl::string_view name, int64_t num,
               int64_t den) {
  const std::optional<int64_t> v = GetInt(node->attr(), name);
  if (v.has_value())
    SetInt64(node->mutable_attr(), name, ScaledValue(*v, num, den));
}

}  // namespace

int64_t ScaledValue(int64_t v, int64_t num, int64_t den) {
  return (v * num + den / 2) / den;
}

void ScaleNodeCost(ChakraProtoMsg::Node* node, int64_t num, int64_t den) {
  if (!GetInt(node->attr(), attr::kRecordedSpanNs).has_value()) {
    const std::optional<int64_t> ns = GetInt(node->attr(), attr::kDurationNs);
    SetInt64(node->mutable_attr(), attr::kRecordedSpanNs,
             ns.has_value() && *ns > 0
                 ? *ns
                 : static_cast<int64_t>(node->duration_micros()) * 1000);
  }
  for (absl::string_view name : {attr::kDurationNs, attr::kInclusiveDurNs,
                                 attr::kNumOps, attr::kTensorSize})
    ScaleAttr(node, name, num, den);
  node->set_duration_micros(static_cast<uint64_t>(
      ScaledValue(static_cast<int64_t>(node->duration_micros()), num, den)));
}

}  // namespace et::scaleout
