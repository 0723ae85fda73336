// Op nesting of a trace, from its node model; see op_hierarchy.h.
#include "visualizer/op_hierarchy.h"

namespace et::viz {

OpHierarchy OpHierarchy::Build(const NodeModel& model) {
  OpHierarchy h;
  const size_t n = model.size();
  h.parent_.assign(n, kNoParent);
  bool any_parent_id = false;
  for (NodeIndex i = 0; i < n; ++i) {
    const uint64_t parent_id = model.parent_id(i);
    if (parent_id == 0) continue;  // the model's "no parent recorded"
    any_parent_id = true;
    auto parent = model.Find(parent_id);
    if (parent.has_value() && *parent != i) h.parent_[i] = *parent;
  }
  if (!any_parent_id) {
    h.source_ = Source::kCtrlDeps;
    for (NodeIndex i = 0; i < n; ++i) {
      auto deps = model.ctrl_deps(i);
      if (!deps.empty() && deps[0] != i) h.parent_[i] = deps[0];
    }
  }
  h.ComputeDepthsCuttingCycles();
  h.BuildChildren();
  return h;
}

// Walks each node's parent chain iteratively until it meets a root or a node of
// known depth, then assigns depths back down the walk. A chain that returns to
// a node on the current walk is a cycle: the parent link of that node (the
// first cycle member the walk reached) is cut, making it a root, so the result
// depends only on node order.
void OpHierarchy::ComputeDepthsCuttingCycles() {
  const size_t n = parent_.size();
  constexpr int32_t kUnknown = -1;
  constexpr int32_t kOnPath = -2;
  depth_.assign(n, kUnknown);
  std::vector<NodeIndex> path;
  for (NodeIndex start = 0; start < n; ++start) {
    if (depth_[start] != kUnknown) continue;
    path.clear();
    NodeIndex cur = start;
    while (cur != kNoParent && depth_[cur] == kUnknown) {
      depth_[cur] = kOnPath;
      path.push_back(cur);
      cur = parent_[cur];
    }
    if (cur != kNoParent && depth_[cur] == kOnPath) {
      parent_[cur] = kNoParent;
      depth_[cur] = 0;
      ++cut_cycles_;
    }
    // Every path node's parent is the next path node, a node of known depth, or
    // (after a cut) the cut node, whose depth is already 0: assign from the end
    // of the walk.
    for (size_t k = path.size(); k-- > 0;) {
      const NodeIndex node = path[k];
      depth_[node] = parent_[node] == kNoParent ? 0 : depth_[parent_[node]] + 1;
    }
  }
}

void OpHierarchy::BuildChildren() {
  const size_t n = parent_.size();
  child_offsets_.assign(n + 1, 0);
  for (NodeIndex i = 0; i < n; ++i) {
    if (parent_[i] != kNoParent) ++child_offsets_[parent_[i] + 1];
  }
  for (size_t i = 0; i < n; ++i) child_offsets_[i + 1] += child_offsets_[i];
  child_targets_.assign(child_offsets_[n], 0);
  std::vector<uint32_t> cursor(child_offsets_.begin(),
                               child_offsets_.end() - 1);
  for (NodeIndex i = 0; i < n; ++i) {  // ascending: children listed in id order
    if (parent_[i] != kNoParent) child_targets_[cursor[parent_[i]]++] = i;
  }
}

NodeIndex OpHierarchy::AncestorAtDepth(NodeIndex i,
                                       int32_t target_depth) const {
  while (depth_[i] > target_depth) i = parent_[i];
  return i;
}

bool OpHierarchy::IsWithin(NodeIndex i, NodeIndex ancestor) const {
  if (depth_[i] < depth_[ancestor]) return false;
  return AncestorAtDepth(i, depth_[ancestor]) == ancestor;
}

}  // namespace et::viz
