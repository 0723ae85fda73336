// et-sim --search world=N: the planner's question. Every layout tp x pp x dp
// of N ranks the trace allows (tp a divisor of its linear pairs' widths, pp
// at most its layer blocks; a dimension recorded in the trace stays as
// recorded), each predicted once (one simulation per (tp, pp): dp follows
// from N, and its replicas are one rank class), ranked by predicted step,
// with each one's memory peak per rank against the device. The rows are
// SweepRows (simulator/report/sweep_report.h), so the chart and the HTML
// Scale tab draw a search as they draw a sweep.
#ifndef SIMULATOR_LAYOUT_SEARCH_H_
#define SIMULATOR_LAYOUT_SEARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/graph.h"
#include "scaleout/parallel_layout.h"
#include "simulator/report/sweep_report.h"
#include "simulator/simulation.h"

namespace et::sim {

struct LayoutSearch {
  int64_t world = 0;
};

// "world=N" (N >= 1); errors are one line.
absl::StatusOr<LayoutSearch> ParseLayoutSearch(absl::string_view text);

// What the trace allows each dimension to be: tp's and pp's candidates at
// `world`, and a line per dimension saying why (limited or skipped).
struct SearchSpace {
  scaleout::ParallelLayout recorded;  // the recorded layout (fixed dims)
  std::vector<int64_t> tp, pp;        // candidates, ascending
  std::vector<std::string> notes;     // one line per dimension
};

// Reads one rank's trace (`graph`) for the limits; `given_recorded` is
// --recorded-layout.
SearchSpace FindSearchSpace(
    const Graph& graph, int64_t world,
    const std::optional<scaleout::ParallelLayout>& given_recorded);

// The layouts of `world` ranks within `space`, tp innermost: for each tp and
// pp dividing the world (with the recorded ep), dp the rest.
std::vector<scaleout::ParallelLayout> SearchLayouts(const SearchSpace& space,
                                                    int64_t world);

// Runs the search on `input` (one rank's trace) with `base` for everything
// else (`base.layout` must be unset). The result's rows are ranked by
// predicted step. Errors (one line): several per-rank files, no layout the
// trace allows (naming each candidate's refusal).
absl::StatusOr<SweepResult> RunLayoutSearch(const SimInput& input,
                                            const SimOptions& base,
                                            const LayoutSearch& search);

}  // namespace et::sim

#endif  // SIMULATOR_LAYOUT_SEARCH_H_
