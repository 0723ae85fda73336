// Which nodes et-viz shows: filters by id range, name pattern, node kind and
// device, rank, profiler step and nesting depth, all combined with AND; and,
// with `collapse`, which hidden nodes fold into a shown ancestor (a hidden op
// whose nearest shown ancestor exists is drawn as part of that ancestor). Real
// traces have 10^4..10^6 nodes; these filters are how a reviewer gets to the
// few hundred that fit on a page. Stateless functions; thread-safe.
#ifndef VISUALIZER_GRAPH_FILTER_H_
#define VISUALIZER_GRAPH_FILTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "visualizer/node_class.h"
#include "visualizer/rank_traces.h"

namespace et::viz {

struct NodeFilter {
  std::optional<uint64_t> min_id;  // inclusive
  std::optional<uint64_t> max_id;  // inclusive
  std::string name_pattern;        // RE2 regex, matched anywhere in the name
  std::vector<DrawKind> kinds;     // empty: every kind
  std::vector<Device> devices;     // empty: every device
  std::vector<int> ranks;          // empty: every rank
  std::optional<int64_t>
      step;  // only ProfilerStep#<step> and the ops inside it
  std::optional<int32_t> max_depth;  // 0 = top-level ops only
  bool collapse = false;  // fold hidden descendants into shown ancestors

  bool empty() const {
    return !min_id && !max_id && name_pattern.empty() && kinds.empty() &&
           devices.empty() && ranks.empty() && !step && !max_depth;
  }
};

// "A:B", "A:", ":B" or "A" (one id) -> min_id/max_id.
absl::Status ParseIdRange(absl::string_view text, NodeFilter* filter);
// Comma list of compute, collective, sendrecv (or send, recv), memory,
// metadata, cpu, gpu: kinds go to `kinds`, cpu/gpu to `devices`.
absl::Status ParseNodeTypes(absl::string_view text, NodeFilter* filter);
// "0,2,4-7" -> ranks.
absl::StatusOr<std::vector<int>> ParseRankList(absl::string_view text);
// An error for a --name pattern RE2 cannot compile: the flag alone is wrong
// (a usage error), found before any input is read.
absl::Status CheckNamePattern(const std::string& pattern);

// The selection in one rank's graph.
struct RankSelection {
  std::vector<uint8_t> shown;  // by NodeIndex: passes every filter
  std::vector<NodeIndex>
      fold_into;  // by NodeIndex: the shown node that stands for it
                  // (itself if shown), OpHierarchy::kNoParent if none
  int64_t shown_count = 0;
  int64_t folded_count = 0;  // hidden nodes folded into a shown one
};

// One RankSelection per trace, in the order of `traces`. Fails with a message
// naming the flag for an invalid pattern, a step or rank that is not in the
// input, or a selection that leaves no node.
absl::StatusOr<std::vector<RankSelection>> SelectNodes(
    const std::vector<RankTrace>& traces, const NodeFilter& filter);

// The step numbers N of the ProfilerStep#N nodes in a trace, ascending.
std::vector<int64_t> ProfilerSteps(const RankTrace& trace);

}  // namespace et::viz

#endif  // VISUALIZER_GRAPH_FILTER_H_
