// The call tree over host ops; see op_table.h.
#include "converter/op_table.h"

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
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

absl::Status OpTable::Build(std::string path, std::vector<HostOp> ops) {
  ops_ = std::move(ops);
  SortById(&ops_);
  const uint32_t n = static_cast<uint32_t>(ops_.size());
  index_.clear();
  index_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (!index_.emplace(ops_[i].id, i).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: node %d: id repeated (node ids must be unique)",
                          path, ops_[i].id));
    }
  }
  parent_.assign(n, kNoOp);
  child_begin_.assign(n + 1, 0);
  std::vector<uint32_t> roots;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t p = ops_[i].parent;
    auto it = p == 0 ? index_.end() : index_.find(p);
    if (p != 0 && it == index_.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: node %d: parent %d is not in the trace", path, ops_[i].id, p));
    }
    if (it == index_.end() || it->second == i) {
      roots.push_back(i);
    } else {
      parent_[i] = it->second;
      ++child_begin_[it->second + 1];
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
