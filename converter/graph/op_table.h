// All host ops of one trace, sorted by id, with the call tree built over them:
// parent index, children, a pre-order (parents before children) and the largest
// id in each subtree (an op has finished once an op with a larger id has
// started). Built iteratively: traces nest deeply and hold 10^6 ops.
#ifndef CONVERTER_GRAPH_OP_TABLE_H_
#define CONVERTER_GRAPH_OP_TABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "converter/common/host_op.h"

namespace et::convert {

inline constexpr uint32_t kNoOp = UINT32_MAX;

class OpTable {
 public:
  OpTable() = default;
  OpTable(OpTable&&) = default;
  OpTable& operator=(OpTable&&) = default;

  // Takes the parsed ops (any order). Fails, naming the node, on repeated ids,
  // on a parent id absent from the trace and on parent cycles.
  absl::Status Build(std::string path, std::vector<HostOp> ops,
                     std::vector<TensorRef> tensors);

  size_t size() const { return ops_.size(); }
  const HostOp& op(uint32_t i) const { return ops_[i]; }
  absl::string_view name(uint32_t i) const { return pool_->Get(ops_[i].name); }
  absl::Span<const TensorRef> inputs(uint32_t i) const {
    return absl::MakeConstSpan(tensors_.data() + ops_[i].tensors_begin,
                               ops_[i].num_inputs);
  }
  absl::Span<const TensorRef> outputs(uint32_t i) const {
    return absl::MakeConstSpan(
        tensors_.data() + ops_[i].tensors_begin + ops_[i].num_inputs,
        ops_[i].num_outputs);
  }
  uint32_t parent(uint32_t i) const { return parent_[i]; }
  absl::Span<const uint32_t> children(uint32_t i) const {
    return absl::MakeConstSpan(child_list_.data() + child_begin_[i],
                               child_begin_[i + 1] - child_begin_[i]);
  }
  // Parents before children; siblings by ascending id.
  const std::vector<uint32_t>& preorder() const { return preorder_; }
  uint64_t subtree_max_id(uint32_t i) const { return subtree_max_id_[i]; }
  std::optional<uint32_t> Find(uint64_t id) const;

  StringPool* pool() { return pool_.get(); }
  const StringPool& pool() const { return *pool_; }
  void set_pool(std::unique_ptr<StringPool> pool) { pool_ = std::move(pool); }

 private:
  std::unique_ptr<StringPool> pool_;
  std::vector<HostOp> ops_;
  std::vector<TensorRef> tensors_;
  std::vector<uint64_t> ids_;  // ops_[i].id, ascending: binary search
  std::vector<uint32_t>
      dense_;  // id - min_id_ -> op, when ids are dense enough
  uint64_t min_id_ = 0;
  std::vector<uint32_t> parent_;
  std::vector<uint32_t>
      child_begin_;  // CSR: children of i are child_list_[begin[i], begin[i+1])
  std::vector<uint32_t> child_list_;
  std::vector<uint32_t> preorder_;
  std::vector<uint64_t> subtree_max_id_;
};

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_OP_TABLE_H_
