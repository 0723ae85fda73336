// Decides what each graph node becomes in a replay (ReplayOp): its kind, GEMM
// shape, collective spec, bytes and recorded time, from the node's type, name
// and attributes. The rules (docs/et-replay.md): COMM_COLL/SEND/RECV nodes are
// communication; GEMM-like names (aten::mm, addmm, bmm, baddbmm, matmul,
// linear) or attr op_kind "gemm" with parseable shapes are GEMMs; other nodes
// on the device are kernels; CPU ops are host compute. Stateless apart from the
// interned names; not thread-safe.
#ifndef REPLAY_OP_CLASSIFIER_H_
#define REPLAY_OP_CLASSIFIER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "proto/graph.h"
#include "proto/step_model.h"
#include "replay/replay_op.h"

namespace et::replay {

// Fills the GEMM shape of a GEMM-like op from its input shapes and types.
// Returns false when the name is not GEMM-like or the shapes do not describe a
// GEMM.
bool GemmShapeFromNode(const ChakraProtoMsg::Node& node, GemmShape* gemm);

class OpClassifier {
 public:
  // `group_names` are the process groups' names in ReplayPlan::groups order.
  explicit OpClassifier(std::vector<std::string> group_names);

  // Classifies node `index` of `graph`. Unknown pg_name values are counted in
  // unknown_groups() and use every rank.
  ReplayOp Classify(const Graph& graph, NodeIndex index);

  int64_t unknown_groups() const { return unknown_groups_; }

 private:
  void ClassifyComm(const ChakraProtoMsg::Node& node, ReplayOp* op);

  absl::flat_hash_map<std::string, int> group_index_;
  int64_t unknown_groups_ = 0;
};

}  // namespace et::replay

#endif  // REPLAY_OP_CLASSIFIER_H_
