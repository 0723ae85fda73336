// Waits between host threads, read from the recorded times where a trace has
// no data flow to say them (a Kineto-only or nsys import: no tensor ids). A
// thread that hands work to another and blocks until it is done (the main
// thread's `## backward ##` range while the autograd engine's thread runs the
// backward) records no op for the wait: its range is a container whose time
// its few children carry, and the graph let the main thread run on (HTA's
// trace_diff control trace, --host-time recorded: steps of 64.1 and 53.5 ms
// against 76.2 and 76.7 recorded, issue 48, item 6).
//
// For each range R of a thread A (an op at any depth that is not a node: a
// container, `ProfilerStep#N`, `## backward ##`), and each other thread B with
// top-level ops starting inside R:
//   - the first node of B inside R waits for the last node of A that ended
//     before it began (the work is handed over, not begun early);
//   - the first node of A after R waits for the last top-level op of B that
//     ended inside R (A blocks until B's work is done).
// Both point to an op that started earlier, so the graph stays acyclic.
#ifndef CONVERTER_GRAPH_CROSS_THREAD_WAITS_H_
#define CONVERTER_GRAPH_CROSS_THREAD_WAITS_H_

#include <cstdint>
#include <vector>

#include "converter/graph/keep_plan.h"
#include "converter/graph/op_table.h"

namespace et::convert {

struct CrossThreadWait {
  uint32_t op;         // a node
  uint32_t waits_for;  // an op (a container stands in by its last node)
};

std::vector<CrossThreadWait> FindCrossThreadWaits(const OpTable& table,
                                                  const KeepPlan& plan);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_CROSS_THREAD_WAITS_H_
