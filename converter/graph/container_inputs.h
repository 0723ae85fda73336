// The tensors a container op reads that no op under it reads: expand_as(x,
// saved) reads `saved` only for its shape, and its children (expand,
// as_strided) never name it; an autograd node's saved tensor then looks dead
// after the forward pass. The container becomes no node (keep_plan.h), so
// its input values travel on its stand-in node (attr container_inputs) for
// the memory model (docs/memory-model.md, "Tensors only a container reads").
#ifndef CONVERTER_GRAPH_CONTAINER_INPUTS_H_
#define CONVERTER_GRAPH_CONTAINER_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "converter/common/trace_text_source.h"
#include "converter/graph/keep_plan.h"
#include "converter/graph/op_table.h"

namespace et::convert {

class ContainerInputs {
 public:
  ContainerInputs(const OpTable& table, const KeepPlan& plan);

  // The attribute's text for node `node`: a JSON list of the input values of
  // the containers it stands in for, one after the other ("" when none). Reads
  // their texts from `text` (a node's own text must be read after: one is valid
  // at a time).
  absl::StatusOr<std::string> ValuesFor(uint32_t node,
                                        TraceTextSource* text) const;

 private:
  const OpTable& table_;
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> containers_;
};

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_CONTAINER_INPUTS_H_
