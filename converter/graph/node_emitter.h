// Turns the nodes of a KeepPlan into Chakra protobuf nodes: type, name, times,
// IOInfo, the attributes consumers read (is_cpu_op, num_ops, tensor_size,
// comm_type, comm_size, pg_name, ...; names in proto/attr_names.h) and
// dependencies. The output is meant to run in ASTRA-sim as it is (see
// docs/astra-sim.md): no METADATA_NODE, no COMM node with is_cpu_op, no
// send/recv without a peer, issue order in data_deps as well. Costs are derived
// from shapes once per distinct (op, shapes, types) and cached: training steps
// repeat shapes.
#ifndef CONVERTER_GRAPH_NODE_EMITTER_H_
#define CONVERTER_GRAPH_NODE_EMITTER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "converter/common/convert_options.h"
#include "converter/common/convert_report.h"
#include "converter/graph/collective_resolver.h"
#include "converter/graph/dependency_builder.h"
#include "converter/graph/keep_plan.h"
#include "converter/graph/op_table.h"
#include "model/op_cost.h"
#include "model/process_group.h"
#include "proto/attributes.h"
#include "proto/et_def.pb.h"

namespace et::convert {

// The summary's skipped_by_reason key for a send/recv without a peer rank.
inline constexpr char kPeerlessP2pReason[] =
    "send/recv without a peer rank (kept as a COMP node)";
// A windowed capture (nsys) cuts some collectives: the host call is in the
// window, its NCCL kernel is not. Ranks are cut at different points, so such
// calls are left COMP nodes (ConvertOptions::collectives_need_kernel).
inline constexpr char kCutCollectiveReason[] =
    "collective whose NCCL kernel is outside the capture (kept as a COMP node)";
// ... and for a collective in a group of one rank (Megatron's data-parallel
// group at dp=1): no communication, and ASTRA-sim never finishes a collective
// of one rank ("Hardware Resource ... has unreleased nodes"). The COMP node
// keeps comm_type, comm_size and pg_name, so a tool that grows the group can
// make it a collective again.
inline constexpr char kOneRankGroupReason[] =
    "collective in a group of one rank (kept as a COMP node)";

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
            ConvertReport* summary);

 private:
  // The steps of Emit, in the order it runs them. Attributes are a list, so
  // the order is part of the output (and of the golden files).
  // Clears `node` for op `i` (keeping its IOInfo allocations), sets id, name.
  void ResetNode(uint32_t i, ChakraProtoMsg::Node* node);
  // ctrl_deps, and data_deps = data deps plus ctrl deps.
  void SetDeps(uint32_t i, ChakraProtoMsg::Node* node, ConvertReport* summary);
  // The IOInfo texts of `io_source`, compacted.
  void SetIoInfo(uint32_t io_source, absl::string_view text,
                 ChakraProtoMsg::Node* node);
  // Start, duration (exclusive, or inclusive for a node with folded children).
  void SetTimes(uint32_t i, ChakraProtoMsg::Node* node);
  // Op i's self time: recorded, else derived from its span; -1 when neither.
  double ExclusiveUs(uint32_t i) const;
  // The ET fields, step, host-op count, GPU placement, strides and extras.
  void SetOpAttrs(uint32_t i, uint32_t io_source, absl::string_view text,
                  ChakraProtoMsg::Node* node);
  void SetTrainingRoleAttrs(uint32_t i, AttrList* attrs) const;
  // A profiler root or process-group table: no time, no cost.
  void SetMarker(uint32_t i, ChakraProtoMsg::Node* node);
  // COMM type and attributes, a wait's sequence number, or the collective a
  // folded record belongs to (--keep all).
  void SetCommunication(uint32_t i, ChakraProtoMsg::Node* node,
                        ConvertReport* summary);
  // num_ops / tensor_size / op_kind of a COMP node, tensor_size of a COMM one.
  void SetSizeAttrs(uint32_t i, uint32_t io_source, absl::string_view text,
                    ChakraProtoMsg::Node* node, ConvertReport* summary);
  // Makes `node` a COMM node for `rec`; false (and counted in the summary)
  // for a send/recv without a peer rank or a collective in a group of one
  // rank, which stay COMP nodes.
  bool SetCommAttrs(const CommRecord& rec, ChakraProtoMsg::Node* node,
                    ConvertReport* summary);
  // How long a host collective's backend work record ran, in ns (0: none).
  int64_t HostWorkNs(const CommRecord& rec) const;
  const OpCost& CostOf(uint32_t i, absl::string_view text);
  // The collective whose call (an ancestor) launched GPU op `i`, or nullptr.
  const CommRecord* LaunchingCollective(uint32_t i) const;

  const OpTable& table_;
  const CollectiveResolver& comms_;
  const KeepPlan& plan_;
  const std::vector<NodeDeps>& deps_;
  const std::vector<ProcessGroup>& groups_;
  // Names of the groups with one member that are not the whole world.
  absl::flat_hash_set<std::string> one_rank_groups_;
  const ConvertOptions& options_;
  std::vector<bool>
      launches_gpu_collective_;  // by op: host call with an NCCL kernel node
  std::vector<uint32_t> gemm_launcher_;  // by GPU op: see IoSourceOf
  absl::flat_hash_map<std::string, OpCost> cost_cache_;
  std::string key_;
  OpCost cost_;
  std::vector<uint64_t> merged_deps_;  // scratch: data_deps of one node
};

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_NODE_EMITTER_H_
