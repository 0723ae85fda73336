// Decides which ops become Chakra nodes (the operator-granularity policy,
// documented in docs/et-convert.md) and, for every op that does not, which node
// stands for it when something depends on it.
//
// Simulation granularity (default): a collective is one node at its outermost
// call with every record and child op folded into it; an op with a cost model
// (GEMM, convolution, attention, elementwise, reduction, memory) is one node
// with its children folded into it; any other op with children is a container
// whose time is carried by its children; leaves are nodes. No time or FLOP is
// counted twice. `kAll` keeps every op.
#ifndef CONVERTER_GRAPH_KEEP_PLAN_H_
#define CONVERTER_GRAPH_KEEP_PLAN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "converter/common/convert_options.h"
#include "converter/graph/collective_resolver.h"
#include "converter/graph/op_table.h"
#include "model/op_cost.h"

namespace et::convert {

enum class Disposition : uint8_t {
  kNode,          // becomes a node
  kFolded,        // its time belongs to another node (`stand_in`)
  kContainer,     // its children carry its time; stand-in: its last node in the
                  // subtree
  kProfilerRoot,  // the profiler's process/thread roots
};

// A profiled step's period on the linked ops' clock (Kineto's
// ProfilerStep#N): [start_us, end_us).
struct StepWindow {
  int64_t step = -1;
  double start_us = 0;
  double end_us = 0;
};

class KeepPlan {
 public:
  // `windows`: the Kineto trace's steps, for an ET that records none itself
  // (no ProfilerStep#N op: Megatron's, Chakra's linked files); an op linked
  // to a time inside one is of that step.
  void Build(const OpTable& table, const CollectiveResolver& comms,
             Granularity granularity,
             const std::vector<StepWindow>& windows = {});

  bool is_node(uint32_t op) const {
    return disposition_[op] == Disposition::kNode;
  }
  bool is_container(uint32_t op) const {
    return disposition_[op] == Disposition::kContainer;
  }
  // The node that represents `op` in dependencies, or kNoOp when none does.
  uint32_t stand_in(uint32_t op) const { return stand_in_[op]; }
  // The nearest ancestor that is a node (the caller), or kNoOp.
  uint32_t caller(uint32_t op) const { return caller_[op]; }
  // How many host ops of the ET a node stands for: itself, the ops folded into
  // it and the containers it stands in for (0 for ops that are not nodes).
  // et-sim's unprofiled host-time model charges dispatch cost per op.
  uint32_t host_ops(uint32_t op) const { return host_ops_[op]; }
  // N of the enclosing `ProfilerStep#N` span, or -1.
  int64_t step(uint32_t op) const { return step_[op]; }
  // Kind of work, by op name (cached per name).
  OpKind kind(uint32_t op) const { return kind_[op]; }
  // Why ops were not made nodes: reason -> count.
  const std::map<std::string, int64_t>& skipped() const { return skipped_; }

 private:
  void AssignStepsByIdRange(const OpTable& table);
  void AssignStepsByWindow(const OpTable& table,
                           const std::vector<StepWindow>& windows);
  void CountHostOps(const OpTable& table);

  std::vector<Disposition> disposition_;
  std::vector<uint32_t> stand_in_;
  std::vector<uint32_t> caller_;
  std::vector<OpKind> kind_;
  std::vector<int64_t> step_;
  std::vector<uint32_t> host_ops_;
  std::map<std::string, int64_t> skipped_;
};

// True for `[pytorch|profiler|execution_trace|process]` and its thread/graph
// variants.
bool IsProfilerRootName(absl::string_view name);
bool IsProcessGroupInitName(absl::string_view name);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_KEEP_PLAN_H_
