// Folds runs of repeated structure out of a drawing. A training step repeats
// itself: N identical transformer blocks or MLP layers, and the optimizer's
// dozen ops once per parameter (18 times in the 2-rank gpt recording). Drawn
// in full, these repeats are most of a page; drawn once with "x N (ids a..b)",
// the page shows the program's shape. Nothing is dropped silently: every run
// says how many instances it stands for and which ids, and the graph counts
// the nodes folded. Pure function of the graph; deterministic.
#ifndef VISUALIZER_REPEAT_FOLDING_H_
#define VISUALIZER_REPEAT_FOLDING_H_

#include <cstdint>
#include <string>

#include "visualizer/viz_graph.h"

namespace et::viz {

// A run is `count` >= 2 consecutive instances of the same sequence of ops on
// one rank's track (same name, kind, device, node type, collective type and
// process group, position by position) whose dependencies inside the run have
// the same shape in every instance (each instance's edges from itself and
// from the instance before it, as offsets). Runs covering fewer than
// kMinRepeatNodes nodes are left alone (folding two `aten::view` into one box
// and a label saves nothing); instances longer than kMaxRepeatPeriod nodes
// are not searched (the search costs nodes x period).
inline constexpr int64_t kMinRepeatNodes = 6;
inline constexpr int64_t kMaxRepeatPeriod = 1024;

// The graph with every run's first instance kept and the others removed.
// Edges from or to a removed node move to the node at the same position in
// the kept instance; edges between instances of one run (the chain of
// repeats) are dropped. Kept nodes of a run have `repeat` set; `repeats` and
// `repeat_folded_nodes` say what was folded. A graph without runs comes back
// unchanged (repeats empty).
VizGraph FoldRepeats(const VizGraph& graph);

// "x 18 (ids 9300..9520)": the label of a run's drawn instance.
std::string RepeatLabel(const RepeatRun& run);

}  // namespace et::viz

#endif  // VISUALIZER_REPEAT_FOLDING_H_
