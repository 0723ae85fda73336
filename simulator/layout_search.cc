// The search space from the trace, the layouts in it, one simulation each,
// and the rows ranked by predicted step.
#include "simulator/layout_search.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/pipeline_plan.h"
#include "scaleout/recorded_layout.h"
#include "scaleout/tensor_parallel.h"
#include "simulator/layout_cache.h"

namespace et::sim {
namespace {

using scaleout::Dim;
using scaleout::ParallelLayout;

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    out.push_back(d);
    if (d != n / d) out.push_back(n / d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// tp's candidates: the recorded tp, else the divisors of the world that
// divide every column/row pair's widths.
std::vector<int64_t> TpCandidates(const Graph& graph, int64_t recorded_tp,
                                  int64_t world, std::string* note) {
  if (recorded_tp > 1) {
    *note = absl::StrFormat(
        "tp: kept at the recorded tp=%d (a recorded tp is not re-split)",
        recorded_tp);
    return {recorded_tp};
  }
  const scaleout::TpWidths widths = scaleout::TensorParallelWidths(graph);
  if (widths.pairs == 0) {
    *note = absl::StrCat(
        "tp: not searched: tensor parallelism cannot be synthesized: ",
        widths.missing);
    return {1};
  }
  std::vector<int64_t> out;
  for (int64_t d : Divisors(world))
    if (widths.width_gcd % d == 0) out.push_back(d);
  *note = absl::StrFormat(
      "tp: divisors of %d, the greatest common divisor of the widths of the "
      "trace's %d column/row linear pairs (the attention heads are not told "
      "apart from the batch in the recorded shapes: check heads %% tp = 0)",
      widths.width_gcd, widths.pairs);
  return out;
}

// pp's candidates: the recorded pp, else 1 .. the layer blocks.
std::vector<int64_t> PpCandidates(const NodeModel& model, int64_t recorded_pp,
                                  int64_t world, std::string* note) {
  if (recorded_pp > 1) {
    *note = absl::StrFormat(
        "pp: kept at the recorded pp=%d (a recorded pp is not re-staged)",
        recorded_pp);
    return {recorded_pp};
  }
  absl::StatusOr<int64_t> layers = scaleout::PipelineLayerCount(model);
  if (!layers.ok()) {
    *note = absl::StrCat("pp: not searched: ", layers.status().message());
    return {1};
  }
  std::vector<int64_t> out;
  for (int64_t d : Divisors(world))
    if (d <= *layers) out.push_back(d);
  *note = absl::StrFormat(
      "pp: at most %d, the layer blocks of the trace's last step (an op "
      "reading parameters no earlier op read starts one)",
      *layers);
  return out;
}

// NodeModel::Load's refusal, kept for a graph read once: a repeated id's
// deps and times would silently vanish.
absl::Status CheckUniqueIds(const std::string& file, const Graph& graph) {
  absl::flat_hash_set<uint64_t> ids;
  for (const ChakraProtoMsg::Node& n : graph.nodes()) {
    if (!ids.insert(n.id()).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: node %d: id repeated", file, n.id()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LayoutSearch> ParseLayoutSearch(absl::string_view text) {
  absl::string_view rest = text;
  int64_t world = 0;
  if (!absl::ConsumePrefix(&rest, "world=") ||
      !absl::SimpleAtoi(rest, &world)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--search %s: expected world=N (the ranks to lay out)", text));
  }
  if (world < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--search %s: a world needs at least one rank", text));
  }
  return LayoutSearch{world};
}

SearchSpace FindSearchSpace(
    const Graph& graph, int64_t world,
    const std::optional<ParallelLayout>& given_recorded) {
  ModelOptions options;
  options.keep_tensors = true;
  const NodeModel model = NodeModel::FromGraph(graph, options);
  SearchSpace space;
  absl::StatusOr<scaleout::RecordedLayout> recorded =
      scaleout::DetectRecordedLayout(model.groups(), model.info().world_size,
                                     given_recorded);
  if (recorded.ok()) space.recorded = recorded->layout;
  std::string tp_note, pp_note;
  space.tp = TpCandidates(graph, space.recorded.of(Dim::kTp), world, &tp_note);
  space.pp = PpCandidates(model, space.recorded.of(Dim::kPp), world, &pp_note);
  const int64_t ep = space.recorded.of(Dim::kEp);
  space.notes = {
      tp_note, pp_note,
      ep > 1
          ? absl::StrFormat("ep: kept at the recorded ep=%d (expert "
                            "parallelism is not re-split)",
                            ep)
          : "ep: not searched: the search does not enumerate ep yet (--layout "
            "ep=E synthesizes it on a mixture-of-experts trace: predict "
            "those layouts one by one)",
      "dp: the rest of the world (each replica runs the recorded batch)"};
  return space;
}

std::vector<ParallelLayout> SearchLayouts(const SearchSpace& space,
                                          int64_t world) {
  std::vector<ParallelLayout> out;
  const int64_t ep = std::max<int64_t>(1, space.recorded.of(Dim::kEp));
  for (int64_t pp : space.pp) {
    for (int64_t tp : space.tp) {
      const int64_t inner = tp * pp * ep;
      if (inner > world || world % inner != 0) continue;
      ParallelLayout layout;
      layout.of(Dim::kTp) = tp;
      layout.of(Dim::kPp) = pp;
      layout.of(Dim::kEp) = ep;
      layout.of(Dim::kDp) = world / inner;
      out.push_back(layout);
    }
  }
  return out;
}

absl::StatusOr<SweepResult> RunLayoutSearch(const SimInput& input,
                                            const SimOptions& base,
                                            const LayoutSearch& search) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ResolveRankFiles(input));
  if (files.size() != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --search takes one rank's trace (every rank of each layout runs "
        "it), got %d per-rank files",
        input.path, files.size()));
  }
  // Read once: every layout's simulation starts from this graph.
  ASSIGN_OR_RETURN(Graph loaded, LoadGraph(files[0]));
  RETURN_IF_ERROR(CheckUniqueIds(files[0], loaded));
  SimInput one = input;
  // Shared by the layouts: the graph, its node model, a split per tp.
  one.cache = std::make_shared<LayoutCache>(
      std::make_shared<const Graph>(std::move(loaded)));
  const SearchSpace space =
      FindSearchSpace(*one.cache->graph(), search.world, base.recorded_layout);
  const std::vector<ParallelLayout> layouts =
      SearchLayouts(space, search.world);
  SweepResult result;
  result.trace = input.path;
  result.search_world = search.world;
  result.search_notes = space.notes;
  result.recorded_layout = space.recorded.ToString();
  // One simulation per layout, on every core (each reads the shared graph
  // and owns the rest); the rows are gathered in the layouts' order, so the
  // result does not depend on the threads.
  std::vector<absl::StatusOr<SweepRow>> rows(layouts.size(),
                                             absl::UnknownError("not run"));
  std::vector<std::string> recorded(layouts.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next++; k < layouts.size(); k = next++) {
      SimOptions options = base;
      options.layout = layouts[k];
      if (layouts[k].of(Dim::kPp) == 1) options.micro_batches = 1;
      absl::StatusOr<std::unique_ptr<Simulation>> sim =
          Simulation::Run(one, options);
      if (!sim.ok()) {
        rows[k] = sim.status();
        continue;
      }
      if ((*sim)->scaled_groups())
        recorded[k] = (*sim)->scaled_groups()->recorded.ToString();
      rows[k] = SweepRowOf((*sim)->report(), layouts[k], 0);
    }
  };
  const size_t threads = std::min<size_t>(
      layouts.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (size_t k = 0; k < layouts.size(); ++k) {
    if (!rows[k].ok()) {
      result.search_refused.push_back(
          {layouts[k].ToString(), std::string(rows[k].status().message())});
      continue;
    }
    if (!recorded[k].empty()) result.recorded_layout = recorded[k];
    result.rows.push_back(std::move(*rows[k]));
  }
  if (result.rows.empty()) {
    std::vector<std::string> why;
    for (const auto& [layout, reason] : result.search_refused)
      why.push_back(absl::StrCat(layout, ": ", reason));
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: --search world=%d: no layout of %d ranks the trace allows (%s)%s",
        input.path, search.world, search.world,
        absl::StrJoin(space.notes, "; "),
        why.empty() ? ""
                    : absl::StrCat("; refused: ", absl::StrJoin(why, "; "))));
  }
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const SweepRow& a, const SweepRow& b) {
                     return a.step_us < b.step_us;
                   });
  for (size_t i = 0; i < result.rows.size(); ++i) result.rows[i].value = i + 1;
  return result;
}

}  // namespace et::sim
