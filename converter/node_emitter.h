// Turns the nodes of a KeepPlan into Chakra protobuf nodes: type, name, times,
// IOInfo, the attributes consumers read (is_cpu_op, num_ops, tensor_size,
// comm_type, comm_size, pg_name, ...; names in proto/attr_names.h) and
// dependencies. Costs are derived from shapes once per distinct (op, shapes,
// types) and cached: training steps repeat shapes.
#ifndef CONVERTER_NODE_EMITTER_H_
#define CONVERTER_NODE_EMITTER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "converter/collective_resolver.h"
#include "converter/converter.h"
#include "converter/dependency_builder.h"
#include "converter/keep_plan.h"
#include "converter/op_table.h"
#include "proto/et_def.pb.h"
#include "proto/op_cost.h"
#include "proto/process_group.h"

namespace et::convert {

class NodeEmitter {
 public:
  NodeEmitter(const OpTable& table, const CollectiveResolver& comms,
              const KeepPlan& plan, const std::vector<NodeDeps>& deps,
              const std::vector<ProcessGroup>& groups,
              const ConvertOptions& options);

  // The op whose IOInfo and cost node `i` is written with: `i` itself, or for
  // the GEMM kernel of a linked trace its launching GEMM op (a kernel has no
  // IOInfo; the replay needs the GEMM's shapes to run it through cuBLAS).
  uint32_t IoSourceOf(uint32_t i) const {
    return gemm_launcher_[i] != kNoOp ? gemm_launcher_[i] : i;
  }

  // Fills `node` for op `i` (which must be a node; `text` is the JSON of
  // IoSourceOf(i)) and counts it.
  void Emit(uint32_t i, absl::string_view text, ChakraProtoMsg::Node* node,
            ConvertSummary* summary);

 private:
  void SetCommAttrs(const CommRecord& rec, ChakraProtoMsg::Node* node,
                    ConvertSummary* summary);
  const OpCost& CostOf(uint32_t i, absl::string_view text);
  // The collective whose call (an ancestor) launched GPU op `i`, or nullptr.
  const CommRecord* LaunchingCollective(uint32_t i) const;

  const OpTable& table_;
  const CollectiveResolver& comms_;
  const KeepPlan& plan_;
  const std::vector<NodeDeps>& deps_;
  const std::vector<ProcessGroup>& groups_;
  const ConvertOptions& options_;
  std::vector<bool>
      launches_gpu_collective_;  // by op: host call with an NCCL kernel node
  std::vector<uint32_t> gemm_launcher_;  // by GPU op: see IoSourceOf
  absl::flat_hash_map<std::string, OpCost> cost_cache_;
  std::string key_;
  OpCost cost_;
};

}  // namespace et::convert

#endif  // CONVERTER_NODE_EMITTER_H_
