// Call-tree repair around collective work records; see nesting_repair.h.
#include "converter/graph/nesting_repair.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "converter/graph/collective_resolver.h"

namespace et::convert {
namespace {

// A file written by another tool (ops in start order, say) is not an end
// order; below this share of children written before their parent, the file
// order says nothing about the tree.
constexpr double kMinEndOrderShare = 0.9;

bool IsThreadRootName(absl::string_view name) {
  return absl::StartsWith(name, "[pytorch|profiler|") &&
         absl::EndsWith(name, "|thread]");
}

struct ThreadOps {
  uint64_t root_id = 0;       // its `[pytorch|profiler|...|thread]` node
  std::vector<uint32_t> ops;  // indices into the trace's ops, in file order
  bool has_work_record = false;
};

// The parent of each op of one thread (by position in `thread.ops`), rebuilt
// from its start order (ids) and end order (file order); nullopt when the two
// orders do not make a tree (or ids repeat). Ops with `leave_out` set are not
// on the stack: they get the op open when they started as parent.
std::optional<std::vector<uint64_t>> RebuildParents(
    const std::vector<HostOp>& ops, const ThreadOps& thread,
    const std::vector<uint8_t>& leave_out) {
  const size_t n = thread.ops.size();
  auto op_at = [&](size_t pos) -> const HostOp& {
    return ops[thread.ops[pos]];
  };
  std::vector<uint32_t> by_start(n);
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(),
            [&](uint32_t a, uint32_t b) { return op_at(a).id < op_at(b).id; });
  for (size_t k = 1; k < n; ++k) {
    if (op_at(by_start[k]).id == op_at(by_start[k - 1]).id) return std::nullopt;
  }
  std::vector<uint64_t> parent(n, thread.root_id);
  std::vector<uint8_t> open(n, 0);
  std::vector<uint32_t> stack;
  size_t next_end = 0;  // file position of the next op to end
  auto skip_left_out = [&] {
    while (next_end < n && leave_out[thread.ops[next_end]]) ++next_end;
  };
  skip_left_out();
  for (uint32_t pos : by_start) {
    if (!stack.empty()) parent[pos] = op_at(stack.back()).id;
    if (leave_out[thread.ops[pos]]) continue;
    stack.push_back(pos);
    open[pos] = 1;
    while (!stack.empty() && stack.back() == next_end) {
      open[stack.back()] = 0;
      stack.pop_back();
      ++next_end;
      skip_left_out();
    }
    // The next op to end is open but not innermost: not a nesting.
    if (next_end < n && open[next_end]) return std::nullopt;
  }
  if (next_end != n) return std::nullopt;
  return parent;
}

// Share of the thread's recorded parent links (to another op of the thread)
// whose child the file holds before the parent, as an end order does.
double EndOrderShare(const std::vector<HostOp>& ops, const ThreadOps& thread) {
  absl::flat_hash_map<uint64_t, uint32_t> position;
  position.reserve(thread.ops.size());
  for (uint32_t k = 0; k < thread.ops.size(); ++k)
    position.emplace(ops[thread.ops[k]].id, k);
  int64_t links = 0, child_first = 0;
  for (uint32_t k = 0; k < thread.ops.size(); ++k) {
    auto it = position.find(ops[thread.ops[k]].parent);
    if (it == position.end()) continue;
    ++links;
    if (k < it->second) ++child_first;
  }
  return links == 0 ? 1.0 : static_cast<double>(child_first) / links;
}

}  // namespace

NestingRepairStats RepairCollectiveRecordNesting(std::vector<HostOp>* ops,
                                                 const StringPool& pool) {
  NestingRepairStats stats;
  enum : uint8_t { kOther, kWork, kRoot };
  // Kinds by name id (names repeat). Most traces have no work record, and
  // then nothing more is done.
  std::vector<uint8_t> kind_of_name(pool.size(), kOther);
  for (StringPool::Id id = 0; id < pool.size(); ++id) {
    const absl::string_view name = pool.Get(id);
    kind_of_name[id] = IsThreadRootName(name)   ? kRoot
                       : IsWorkRecordName(name) ? kWork
                                                : kOther;
  }
  bool any_work_record = false;
  for (const HostOp& op : *ops) {
    if (op.ts_us >= 0) return {};  // linked: its own order (linked_order.h)
    any_work_record |= kind_of_name[op.name] == kWork;
  }
  if (!any_work_record) return stats;
  std::vector<uint8_t> is_work(ops->size(), 0);
  std::map<int64_t, ThreadOps> threads;  // by tid: deterministic order
  for (uint32_t i = 0; i < ops->size(); ++i) {
    const HostOp& op = (*ops)[i];
    ThreadOps& thread = threads[op.tid];
    if (kind_of_name[op.name] == kRoot) {
      thread.root_id = op.id;
      continue;
    }
    is_work[i] = kind_of_name[op.name] == kWork;
    thread.has_work_record |= is_work[i] != 0;
    thread.ops.push_back(i);
  }
  const std::vector<uint8_t> none(ops->size(), 0);
  for (const auto& [tid, thread] : threads) {
    if (!thread.has_work_record || thread.root_id == 0) continue;
    // A work record that really encloses its ops (NCCL's, ended on the
    // calling thread) leaves the recorded tree equal to the orders' tree.
    if (auto all = RebuildParents(*ops, thread, none)) {
      bool same = true;
      for (size_t k = 0; k < thread.ops.size() && same; ++k)
        same = (*all)[k] == (*ops)[thread.ops[k]].parent;
      if (same) continue;
    }
    if (EndOrderShare(*ops, thread) < kMinEndOrderShare) continue;
    auto rebuilt = RebuildParents(*ops, thread, is_work);
    if (!rebuilt) {
      ++stats.threads_left_as_recorded;
      continue;
    }
    int64_t changed = 0;
    for (size_t k = 0; k < thread.ops.size(); ++k) {
      HostOp& op = (*ops)[thread.ops[k]];
      if (is_work[thread.ops[k]] || op.parent == (*rebuilt)[k]) continue;
      op.parent = (*rebuilt)[k];
      ++changed;
    }
    if (changed > 0) ++stats.threads_repaired;
    stats.ops_reparented += changed;
  }
  return stats;
}

}  // namespace et::convert
