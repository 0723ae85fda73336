// Rebuilds the call tree of a thread whose nesting PyTorch's execution-trace
// observer recorded wrongly around collectives.
//
// The observer keeps one parent stack per thread: an op is pushed when it
// starts (its parent is the top then) and the top is popped when any op of
// that thread ends. A collective's work record (`gloo:all_reduce`, ...) carries
// the calling thread's id, but the backend's worker thread starts and ends it
// whenever the collective runs. So ops that start while it is on top get it
// as their parent (ten `aten::addcdiv_` of an optimizer under a
// `gloo:all_reduce`), and when the op below it ends it pops the work record
// instead of itself and stays on the stack as the parent of ops that start
// after it ended. Whether and where this happens depends on timing: ranks of
// one program convert to graphs of different sizes, and a whole step can end
// up folded into a collective.
//
// The observer numbers ops in start order and writes each node when it ends,
// so a thread's ops in id order are a pre-order of its true call tree and in
// file order a post-order, and the two determine the tree. The repair
// rebuilds it without the work records (they keep their recorded parent: the
// collective resolver pairs them with their call) on threads where the
// recorded tree disagrees with the two orders and a work record is present.
#ifndef CONVERTER_GRAPH_NESTING_REPAIR_H_
#define CONVERTER_GRAPH_NESTING_REPAIR_H_

#include <cstdint>
#include <vector>

#include "converter/common/host_op.h"

namespace et::convert {

struct NestingRepairStats {
  int64_t threads_repaired = 0;
  int64_t ops_reparented = 0;  // ops whose parent changed
  // Threads with a work record whose recorded tree disagrees with the start
  // and end order, but whose orders do not make a tree either: left as
  // recorded.
  int64_t threads_left_as_recorded = 0;
};

// `ops` in file order, as parsed (before any renumbering). Leaves a linked
// ("ET+", with `ts`) trace and a trace with repeated ids untouched.
NestingRepairStats RepairCollectiveRecordNesting(std::vector<HostOp>* ops,
                                                 const StringPool& pool);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_NESTING_REPAIR_H_
