// Computes the dependencies of every node of a KeepPlan:
//  ctrl: the caller (nearest enclosing node), the previous node on the same
//  thread (issue
//        order), for GPU nodes the previous GPU node on the same stream, and
//        the linked trace's inter_thread_dep / sync_dep; waits depend on the
//        collective they wait for; each collective depends on the previous
//        collective of its process group (recorded order), so every consumer
//        issues a group's collectives in one order on every rank.
//  data: producer -> consumer through tensor ids. An op's outputs are published
//  when it
//        ends, i.e. once an op with a larger id than any in its subtree has
//        started, so a consumer depends on the op that last wrote the tensor
//        before it began.
// Every dependency points at a node (through KeepPlan::stand_in); none is
// dropped silently: dependencies on ops with no stand-in are counted.
#ifndef CONVERTER_GRAPH_DEPENDENCY_BUILDER_H_
#define CONVERTER_GRAPH_DEPENDENCY_BUILDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "converter/graph/collective_resolver.h"
#include "converter/graph/keep_plan.h"
#include "converter/graph/op_table.h"

namespace et::convert {

struct NodeDeps {
  std::vector<uint64_t> ctrl;  // node ids, ascending, unique
  std::vector<uint64_t> data;
};

struct DependencyStats {
  int64_t unresolved = 0;  // deps whose target has no node standing for it
  int64_t missing_targets =
      0;  // inter_thread_dep / sync_dep ids absent from the trace
  int64_t cross_thread_waits = 0;  // waits between threads from their times
};

class DependencyBuilder {
 public:
  // Fills `deps` (indexed by op; empty for non-nodes). Fails with the ids of a
  // cycle if the resulting graph is cyclic (only possible through linked-trace
  // deps).
  // `timed_waits`: add the waits between threads the recorded times show
  // (cross_thread_waits.h), for a trace whose ops record no data flow.
  absl::Status Build(const std::string& path, const OpTable& table,
                     const CollectiveResolver& comms, const KeepPlan& plan,
                     std::vector<NodeDeps>* deps, bool timed_waits = false);
  const DependencyStats& stats() const { return stats_; }

 private:
  DependencyStats stats_;
};

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_DEPENDENCY_BUILDER_H_
