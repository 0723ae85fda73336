// The call tree over host ops; see op_table.h.
#include "converter/graph/op_table.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et::convert {
namespace {

// Sorts ops by id moving each op at most once: an index sort, then the
// permutation applied in place by following its cycles. Ops are a few hundred
// bytes; sorting them directly cost 15% of a conversion.
void SortById(std::vector<HostOp>* ops) {
  const size_t n = ops->size();
  std::vector<std::pair<uint64_t, uint32_t>> order(n);
  bool sorted = true;
  for (size_t i = 0; i < n; ++i) {
    order[i] = {(*ops)[i].id, static_cast<uint32_t>(i)};
    if (i > 0 && order[i].first < order[i - 1].first) sorted = false;
  }
  if (sorted) return;
  std::sort(order.begin(), order.end());
  std::vector<bool> placed(n, false);
  for (size_t start = 0; start < n; ++start) {
    if (placed[start] || order[start].second == start) continue;
    HostOp held = std::move((*ops)[start]);
    size_t dst = start;
    while (true) {
      placed[dst] = true;
      const size_t src = order[dst].second;
      if (src == start) break;
      (*ops)[dst] = std::move((*ops)[src]);
      dst = src;
    }
    (*ops)[dst] = std::move(held);
  }
}

}  // namespace

std::optional<uint32_t> OpTable::Find(uint64_t id) const {
  if (!dense_.empty()) {
    if (id < min_id_ || id - min_id_ >= dense_.size()) return std::nullopt;
    const uint32_t i = dense_[id - min_id_];
    if (i == kNoOp) return std::nullopt;
    return i;
  }
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) return std::nullopt;
  return static_cast<uint32_t>(it - ids_.begin());
}

absl::Status OpTable::Build(std::string path, std::vector<HostOp> ops,
                            std::vector<TensorRef> tensors) {
  ops_ = std::move(ops);
  tensors_ = std::move(tensors);
  SortById(&ops_);
  const uint32_t n = static_cast<uint32_t>(ops_.size());
  // Ops are sorted by id: repeats are neighbours. ET ids are near-dense (node
  // and tensor ids share one counter), so a direct index usually beats a hash
  // map by far.
  ids_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    ids_[i] = ops_[i].id;
    if (i > 0 && ids_[i] == ids_[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: node %d: id repeated (node ids must be unique)",
                          path, ops_[i].id));
    }
  }
  dense_.clear();
  if (n > 0 &&
      ids_.back() - ids_.front() < 4 * static_cast<uint64_t>(n) + 1024) {
    min_id_ = ids_.front();
    dense_.assign(ids_.back() - min_id_ + 1, kNoOp);
    for (uint32_t i = 0; i < n; ++i) dense_[ids_[i] - min_id_] = i;
  }
  parent_.assign(n, kNoOp);
  child_begin_.assign(n + 1, 0);
  std::vector<uint32_t> roots;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t p = ops_[i].parent;
    const std::optional<uint32_t> found = p == 0 ? std::nullopt : Find(p);
    if (p != 0 && !found.has_value()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: node %d: parent %d is not in the trace", path, ops_[i].id, p));
    }
    if (!found.has_value() || *found == i) {
      roots.push_back(i);
    } else {
      parent_[i] = *found;
      ++child_begin_[*found + 1];
    }
  }
  for (uint32_t i = 0; i < n; ++i) child_begin_[i + 1] += child_begin_[i];
  child_list_.assign(child_begin_[n], 0);
  std::vector<uint32_t> cursor(child_begin_.begin(), child_begin_.end() - 1);
  for (uint32_t i = 0; i < n; ++i) {  // ascending i: siblings in id order
    if (parent_[i] != kNoOp) child_list_[cursor[parent_[i]]++] = i;
  }
  // Iterative pre-order from the roots; ops never reached sit on a parent
  // cycle.
  preorder_.clear();
  preorder_.reserve(n);
  std::vector<uint32_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    preorder_.push_back(i);
    const auto kids = children(i);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
  if (preorder_.size() != n) {
    std::vector<bool> reached(n, false);
    for (uint32_t i : preorder_) reached[i] = true;
    uint32_t start = 0;
    while (reached[start]) ++start;
    std::vector<uint64_t> cycle;
    std::vector<bool> on_path(n, false);
    for (uint32_t cur = start; !on_path[cur]; cur = parent_[cur]) {
      on_path[cur] = true;
      cycle.push_back(ops_[cur].id);
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: node %d: parent cycle through nodes %s", path,
                        ops_[start].id, absl::StrJoin(cycle, " -> ")));
  }
  subtree_max_id_.resize(n);
  for (uint32_t i = 0; i < n; ++i) subtree_max_id_[i] = ops_[i].id;
  for (auto it = preorder_.rbegin(); it != preorder_.rend(); ++it) {
    if (parent_[*it] != kNoOp) {
      subtree_max_id_[parent_[*it]] =
          std::max(subtree_max_id_[parent_[*it]], subtree_max_id_[*it]);
    }
  }
  return absl::OkStatus();
}

}  // namespace et::convert
