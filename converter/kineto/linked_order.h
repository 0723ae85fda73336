// Puts the nodes of a linked ("ET+") trace in start order. The converter reads
// ascending ids as start order (per-thread issue order, stream order, when an
// op's outputs are published). A PyTorch ET's ids are, but Chakra's
// `chakra_trace_link` renumbers every node from 0 and gives each GPU op the
// next id after its launcher: a child can then have a lower id than its parent
// and id order is not time order (495 of 1,675 nodes in one file), which made
// the dependency builder report cycles that the trace does not have.
//
// When any host op has a `ts`, the ops are renumbered 1..n in the order of
// their start: `ts`, an op without one starting with the sibling before it
// (its parent when first); a child never before its parent; ties by depth, then
// by the old id. Parents, `inter_thread_dep`s and `sync_dep`s follow; a dep on
// an op that starts later (it cannot have been waited for) is dropped and
// counted. Each node keeps its old id as the `source_id` attribute.
#ifndef CONVERTER_KINETO_LINKED_ORDER_H_
#define CONVERTER_KINETO_LINKED_ORDER_H_

#include <cstdint>
#include <vector>

#include "converter/common/host_op.h"

namespace et::convert {

struct LinkedOrderStats {
  int64_t moved = 0;              // nodes whose position in id order changed
  int64_t deps_against_time = 0;  // inter_thread_dep/sync_dep dropped
  int64_t deps_to_absent = 0;     // deps naming ids not in the trace, dropped
};

// Renumbers `ops` in place (see above). Leaves a trace without `ts`, one whose
// id order already is start order, and one with a parent id absent from the
// trace (OpTable reports that) untouched.
LinkedOrderStats OrderLinkedTraceByStart(std::vector<HostOp>* ops,
                                         StringPool* pool);

}  // namespace et::convert

#endif  // CONVERTER_KINETO_LINKED_ORDER_H_
