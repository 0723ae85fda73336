// Node selection for et-viz; see graph_filter.h.
#include "visualizer/graph_filter.h"

#include <algorithm>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "re2/re2.h"

namespace et::viz {
namespace {

constexpr absl::string_view kStepPrefix = "ProfilerStep#";

absl::StatusOr<uint64_t> ParseId(absl::string_view text,
                                 absl::string_view whole) {
  uint64_t id = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &id)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--ids '%s': '%s' is not a node id (expected A:B, A:, :B or A)", whole,
        text));
  }
  return id;
}

// RE2, not std::regex: std::regex matches by recursive backtracking, so a
// pattern such as '.*x' over a 30 KB node name overflowed the stack; RE2 runs
// in time linear in the name and never recurses on it. RE2 syntax is the
// ECMAScript subset people write for names (no backreferences or lookaround).
absl::StatusOr<std::unique_ptr<RE2>> CompilePattern(
    const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--name '%s': invalid regular expression: %s", pattern, re->error()));
  }
  return re;
}

// Marks the nodes of step `step`: those et-convert tagged with attribute `step`
// (its default granularity drops the ProfilerStep#N spans themselves), and the
// subtree of every ProfilerStep#<step> node (iterative, explicit stack).
std::vector<uint8_t> StepMask(const RankTrace& trace, int64_t step) {
  const NodeModel& model = trace.model;
  std::vector<uint8_t> in_step(model.size(), 0);
  const std::string step_name = absl::StrCat(kStepPrefix, step);
  std::vector<NodeIndex> stack;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (model.name(i) == step_name || model.step(i) == step) {
      stack.push_back(i);
    }
  }
  while (!stack.empty()) {
    const NodeIndex i = stack.back();
    stack.pop_back();
    if (in_step[i]) continue;
    in_step[i] = 1;
    for (NodeIndex child : trace.hierarchy.children(i)) stack.push_back(child);
  }
  return in_step;
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Hidden nodes fold into their nearest shown ancestor. Nodes are visited by
// increasing depth so a parent's answer is known before its children ask for
// it.
void FoldIntoShownAncestors(const RankTrace& trace, RankSelection* sel) {
  const OpHierarchy& h = trace.hierarchy;
  const size_t n = trace.model.size();
  std::vector<NodeIndex> by_depth(n);
  for (NodeIndex i = 0; i < n; ++i) by_depth[i] = i;
  std::stable_sort(
      by_depth.begin(), by_depth.end(),
      [&](NodeIndex a, NodeIndex b) { return h.depth(a) < h.depth(b); });
  for (NodeIndex i : by_depth) {
    if (sel->shown[i]) continue;
    const NodeIndex parent = h.parent(i);
    if (parent == OpHierarchy::kNoParent) continue;
    sel->fold_into[i] = sel->fold_into[parent];
    if (sel->fold_into[i] != OpHierarchy::kNoParent) ++sel->folded_count;
  }
}

}  // namespace

absl::Status CheckNamePattern(const std::string& pattern) {
  if (pattern.empty()) return absl::OkStatus();
  return CompilePattern(pattern).status();
}

absl::Status ParseIdRange(absl::string_view text, NodeFilter* filter) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() == 1) {
    ASSIGN_OR_RETURN(uint64_t id, ParseId(parts[0], text));
    filter->min_id = filter->max_id = id;
    return absl::OkStatus();
  }
  if (parts.size() != 2 || (parts[0].empty() && parts[1].empty())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--ids '%s': expected A:B, A:, :B or A", text));
  }
  if (!parts[0].empty()) {
    ASSIGN_OR_RETURN(filter->min_id, ParseId(parts[0], text));
  }
  if (!parts[1].empty()) {
    ASSIGN_OR_RETURN(filter->max_id, ParseId(parts[1], text));
  }
  if (filter->min_id && filter->max_id && *filter->min_id > *filter->max_id) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--ids '%s': the range is empty (%d > %d)", text,
                        *filter->min_id, *filter->max_id));
  }
  return absl::OkStatus();
}

absl::Status ParseNodeTypes(absl::string_view text, NodeFilter* filter) {
  for (absl::string_view raw : absl::StrSplit(text, ',')) {
    const std::string word =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(raw));
    if (word == "compute" || word == "comp") {
      filter->kinds.push_back(DrawKind::kCompute);
    } else if (word == "collective" || word == "coll") {
      filter->kinds.push_back(DrawKind::kCollective);
    } else if (word == "sendrecv" || word == "send" || word == "recv" ||
               word == "p2p") {
      filter->kinds.push_back(DrawKind::kSendRecv);
    } else if (word == "memory" || word == "mem") {
      filter->kinds.push_back(DrawKind::kMemory);
    } else if (word == "metadata") {
      filter->kinds.push_back(DrawKind::kMetadata);
    } else if (word == "comm") {
      filter->kinds.push_back(DrawKind::kCollective);
      filter->kinds.push_back(DrawKind::kSendRecv);
    } else if (word == "cpu") {
      filter->devices.push_back(Device::kCpu);
    } else if (word == "gpu") {
      filter->devices.push_back(Device::kGpu);
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("--type '%s': unknown type '%s' (use compute, "
                          "collective, sendrecv, comm, "
                          "memory, metadata, cpu, gpu)",
                          text, word));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> ParseRankList(absl::string_view text) {
  std::vector<int> ranks;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> ends =
        absl::StrSplit(item, absl::MaxSplits('-', 1));
    int lo = 0;
    int hi = 0;
    bool ok = absl::SimpleAtoi(ends[0], &lo) && lo >= 0;
    hi = lo;
    if (ok && ends.size() == 2) ok = absl::SimpleAtoi(ends[1], &hi) && hi >= lo;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--rank '%s': '%s' is not a rank or range (expected e.g. 0,2,4-7)",
          text, item));
    }
    // Checked before the loop allocates: '0-2000000000' asked for 8 GB.
    if (hi >= kMaxRanks ||
        static_cast<int64_t>(ranks.size()) + (hi - lo) >= kMaxRanks) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--rank '%s': '%s' goes past the limit of %d ranks",
                          text, item, kMaxRanks));
    }
    for (int r = lo; r <= hi; ++r) ranks.push_back(r);
  }
  return ranks;
}

std::vector<int64_t> ProfilerSteps(const RankTrace& trace) {
  std::vector<int64_t> steps;
  const NodeModel& model = trace.model;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    absl::string_view name = model.name(i);
    int64_t step = 0;
    if (absl::ConsumePrefix(&name, kStepPrefix) &&
        absl::SimpleAtoi(name, &step)) {
      steps.push_back(step);
    } else if (model.step(i) >= 0) {  // -1: no step recorded
      steps.push_back(model.step(i));
    }
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

absl::StatusOr<std::vector<RankSelection>> SelectNodes(
    const std::vector<RankTrace>& traces, const NodeFilter& filter) {
  std::unique_ptr<RE2> pattern;
  if (!filter.name_pattern.empty()) {
    ASSIGN_OR_RETURN(pattern, CompilePattern(filter.name_pattern));
  }
  std::vector<int> ranks_present;
  for (const RankTrace& t : traces) ranks_present.push_back(t.rank);
  for (int r : filter.ranks) {
    if (!Contains(ranks_present, r)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--rank %d: no input has rank %d (the inputs have ranks %s)", r, r,
          absl::StrJoin(ranks_present, ", ")));
    }
  }
  std::vector<RankSelection> selections(traces.size());
  int64_t total_shown = 0;
  int64_t total_nodes = 0;
  std::vector<int64_t> steps_seen;
  for (size_t t = 0; t < traces.size(); ++t) {
    const RankTrace& trace = traces[t];
    const NodeModel& model = trace.model;
    const size_t n = model.size();
    RankSelection& sel = selections[t];
    sel.shown.assign(n, 0);
    sel.fold_into.assign(n, OpHierarchy::kNoParent);
    total_nodes += static_cast<int64_t>(n);
    if (!filter.ranks.empty() && !Contains(filter.ranks, trace.rank)) continue;
    std::vector<uint8_t> in_step;
    if (filter.step) {
      in_step = StepMask(trace, *filter.step);
      for (int64_t s : ProfilerSteps(trace)) steps_seen.push_back(s);
    }
    for (NodeIndex i = 0; i < n; ++i) {
      const uint64_t id = model.id(i);
      if (filter.min_id && id < *filter.min_id) continue;
      if (filter.max_id && id > *filter.max_id) continue;
      if (filter.step && !in_step[i]) continue;
      if (filter.max_depth && trace.hierarchy.depth(i) > *filter.max_depth)
        continue;
      if (!filter.kinds.empty() &&
          std::find(filter.kinds.begin(), filter.kinds.end(),
                    KindOf(model, i)) == filter.kinds.end()) {
        continue;
      }
      if (!filter.devices.empty() &&
          std::find(filter.devices.begin(), filter.devices.end(),
                    DeviceOf(model, i)) == filter.devices.end()) {
        continue;
      }
      if (pattern) {
        // This RE2 takes its own StringPiece, not absl::string_view.
        const absl::string_view name = model.name(i);
        if (!RE2::PartialMatch(re2::StringPiece(name.data(), name.size()),
                               *pattern)) {
          continue;
        }
      }
      sel.shown[i] = 1;
      sel.fold_into[i] = i;
      ++sel.shown_count;
    }
    if (filter.collapse) FoldIntoShownAncestors(trace, &sel);
    total_shown += sel.shown_count;
  }
  if (filter.step && total_shown == 0) {
    std::sort(steps_seen.begin(), steps_seen.end());
    steps_seen.erase(std::unique(steps_seen.begin(), steps_seen.end()),
                     steps_seen.end());
    if (std::find(steps_seen.begin(), steps_seen.end(), *filter.step) ==
        steps_seen.end()) {
      return absl::NotFoundError(absl::StrFormat(
          "--step %d: no node named ProfilerStep#%d; %s", *filter.step,
          *filter.step,
          steps_seen.empty()
              ? std::string("the trace has no ProfilerStep nodes")
              : absl::StrCat("the trace has steps ",
                             absl::StrJoin(steps_seen, ", "))));
    }
  }
  if (total_shown == 0) {
    return absl::NotFoundError(absl::StrFormat(
        "the filters select none of the %d nodes; loosen them", total_nodes));
  }
  return selections;
}

}  // namespace et::viz
