// The call tree over host ops; see op_table.h.
#include "converter/op_table.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et::convert {

std::optional<uint32_t> OpTable::Find(uint64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

absl::Status OpTable::Build(std::string path, std::vector<HostOp> ops) {
  ops_ = std::move(ops);
  std::sort(ops_.begin(), ops_.end(),
            [](const HostOp& a, const HostOp& b) { return a.id < b.id; });
  const uint32_t n = static_cast<uint32_t>(ops_.size());
  index_.clear();
  index_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (!index_.emplace(ops_[i].id, i).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: node %d: id repeated (node ids must be unique)", path, ops_[i].id));
    }
  }
  parent_.assign(n, kNoOp);
  children_.assign(n, {});
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
      children_[it->second].push_back(i);  // ascending id: i increases
    }
  }
  // Iterative pre-order from the roots; ops never reached sit on a parent cycle.
  preorder_.clear();
  preorder_.reserve(n);
  std::vector<uint32_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    preorder_.push_back(i);
    const auto& kids = children_[i];
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
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: node %d: parent cycle through nodes %s", path, ops_[start].id,
        absl::StrJoin(cycle, " -> ")));
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
