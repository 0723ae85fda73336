// The op nesting of one trace: which op encloses which (an aten::linear
// encloses its aten::addmm, a ProfilerStep#3 encloses the whole step). Our
// converter records the enclosing op in attr parent_id (NodeModel::parent_id,
// 0 = none); older writers (Chakra's reference converter) only put the parent
// in ctrl_deps, so when no node names a parent the first resolvable ctrl dep
// is taken as the parent.
// Parent links that would form a cycle (the 2023 feeder trace has ctrl cycles)
// are cut, deterministically, and counted. Built once per graph, immutable
// afterwards; thread-safe to read.
#ifndef VISUALIZER_OP_HIERARCHY_H_
#define VISUALIZER_OP_HIERARCHY_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/types/span.h"
#include "model/node_model.h"

namespace et::viz {

class OpHierarchy {
 public:
  static constexpr NodeIndex kNoParent = std::numeric_limits<NodeIndex>::max();
  enum class Source { kParentIdAttr, kCtrlDeps };

  static OpHierarchy Build(const NodeModel& model);

  NodeIndex parent(NodeIndex i) const { return parent_[i]; }
  absl::Span<const NodeIndex> children(NodeIndex i) const {
    return absl::MakeConstSpan(child_targets_.data() + child_offsets_[i],
                               child_offsets_[i + 1] - child_offsets_[i]);
  }
  // 0 for a root.
  int32_t depth(NodeIndex i) const { return depth_[i]; }
  // The ancestor of `i` at `target_depth` (i itself when depth(i) <=
  // target_depth).
  NodeIndex AncestorAtDepth(NodeIndex i, int32_t target_depth) const;
  // True when `ancestor` is `i` or encloses it.
  bool IsWithin(NodeIndex i, NodeIndex ancestor) const;

  Source source() const { return source_; }
  int64_t cut_cycles() const { return cut_cycles_; }

 private:
  void ComputeDepthsCuttingCycles();
  void BuildChildren();

  std::vector<NodeIndex> parent_;
  std::vector<int32_t> depth_;
  std::vector<uint32_t> child_offsets_;
  std::vector<NodeIndex> child_targets_;
  Source source_ = Source::kParentIdAttr;
  int64_t cut_cycles_ = 0;
};

}  // namespace et::viz

#endif  // VISUALIZER_OP_HIERARCHY_H_
