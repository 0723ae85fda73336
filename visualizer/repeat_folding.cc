// Folding runs of repeated structure out of a drawing; see repeat_folding.h.
#include "visualizer/repeat_folding.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "visualizer/page_layout.h"

namespace et::viz {
namespace {

constexpr int64_t kNone = -1;

// Where each node sits: its track (rank and queue) and its position in the
// track's nodes in graph order (by id).
struct Tracks {
  std::vector<std::vector<uint32_t>> members;  // per track, node indices
  std::vector<int64_t> track_of;               // per node
  std::vector<int64_t> position;               // per node, in its track
};

Tracks SplitIntoTracks(const VizGraph& graph) {
  std::map<std::pair<int, Queue>, int64_t> index;
  Tracks t;
  t.track_of.resize(graph.nodes.size());
  t.position.resize(graph.nodes.size());
  for (uint32_t k = 0; k < graph.nodes.size(); ++k) {
    const auto key = std::make_pair(graph.nodes[k].rank, graph.nodes[k].queue);
    auto [it, added] =
        index.try_emplace(key, static_cast<int64_t>(t.members.size()));
    if (added) t.members.emplace_back();
    t.track_of[k] = it->second;
    t.position[k] = static_cast<int64_t>(t.members[it->second].size());
    t.members[it->second].push_back(k);
  }
  return t;
}

// One integer per node: equal for nodes that draw as the same op.
std::vector<int32_t> OpSignatures(const VizGraph& graph) {
  absl::flat_hash_map<std::string, int32_t> ids;
  std::vector<int32_t> out;
  out.reserve(graph.nodes.size());
  for (const VizNode& n : graph.nodes) {
    const std::string key = absl::StrCat(
        n.name, "\x1f", static_cast<int>(n.kind), "\x1f",
        static_cast<int>(n.device), "\x1f", static_cast<int>(n.type), "\x1f",
        n.comm_type, "\x1f", n.pg_name);
    out.push_back(
        ids.try_emplace(key, static_cast<int32_t>(ids.size())).first->second);
  }
  return out;
}

// The dependencies that shape a drawing (data and control), by target.
std::vector<std::vector<std::pair<uint32_t, EdgeKind>>> InEdges(
    const VizGraph& graph) {
  std::vector<std::vector<std::pair<uint32_t, EdgeKind>>> in(
      graph.nodes.size());
  for (const VizEdge& e : graph.edges) {
    if (e.kind == EdgeKind::kData || e.kind == EdgeKind::kCtrl)
      in[e.to].push_back({e.from, e.kind});
  }
  return in;
}

struct Candidate {
  int64_t start = 0;  // position in the track
  int64_t period = 0;
  int64_t count = 0;
};

class RunFinder {
 public:
  RunFinder(const Tracks& tracks, const std::vector<int32_t>& signature,
            const std::vector<std::vector<std::pair<uint32_t, EdgeKind>>>& in)
      : tracks_(tracks), signature_(signature), in_(in) {}

  // Runs on one track, left to right, not overlapping.
  std::vector<Candidate> Find(int64_t track) const {
    const std::vector<uint32_t>& seq = tracks_.members[track];
    const int64_t n = static_cast<int64_t>(seq.size());
    // cover[i]: nodes covered by the longest run of whole instances starting
    // at i, over all periods (the smaller period on ties); O(n x period).
    std::vector<int64_t> cover(n, 0), period(n, 0);
    for (int64_t p = 1; p <= std::min(n / 2, kMaxRepeatPeriod); ++p) {
      int64_t matching = 0;  // positions t.. that equal the one p later
      for (int64_t t = n - p - 1; t >= 0; --t) {
        matching =
            signature_[seq[t]] == signature_[seq[t + p]] ? matching + 1 : 0;
        const int64_t covered = (1 + matching / p) * p;
        if (covered >= 2 * p && covered > cover[t]) {
          cover[t] = covered;
          period[t] = p;
        }
      }
    }
    std::vector<Candidate> runs;
    for (int64_t i = 0; i < n;) {
      if (cover[i] < kMinRepeatNodes) {
        ++i;
        continue;
      }
      // A run starting inside this one that covers more is the better
      // alignment (the block starts there).
      int64_t better = kNone;
      for (int64_t j = i + 1; j < std::min(n, i + cover[i]); ++j) {
        if (cover[j] > cover[i]) {
          better = j;
          break;
        }
      }
      if (better != kNone) {
        i = better;
        continue;
      }
      const int64_t count =
          ValidInstances(track, i, period[i], cover[i] / period[i]);
      if (count >= 2 && count * period[i] >= kMinRepeatNodes) {
        runs.push_back({i, period[i], count});
        i += count * period[i];
      } else {
        ++i;
      }
    }
    return runs;
  }

 private:
  using EdgeShape = std::tuple<int64_t, int64_t, int>;  // offset, span, kind

  // The dependencies into instance j of a run at `start`, from the same
  // instance or the one before, as (offset of the target, distance, kind).
  std::vector<EdgeShape> InstanceEdges(int64_t track, int64_t start,
                                       int64_t period, int64_t j) const {
    std::vector<EdgeShape> out;
    const std::vector<uint32_t>& seq = tracks_.members[track];
    for (int64_t o = 0; o < period; ++o) {
      const int64_t to = j * period + o;
      for (const auto& [from, kind] : in_[seq[start + to]]) {
        if (tracks_.track_of[from] != track) continue;
        const int64_t from_offset = tracks_.position[from] - start;
        const int64_t distance = to - from_offset;
        if (from_offset >= 0 && distance > 0 && distance <= o + period)
          out.emplace_back(o, distance, static_cast<int>(kind));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // How many of `count` instances at `start` have the same dependency shape:
  // instance 0's own edges are instance 1's edges within itself, and every
  // later instance has instance 1's edges.
  int64_t ValidInstances(int64_t track, int64_t start, int64_t period,
                         int64_t count) const {
    const std::vector<EdgeShape> second =
        InstanceEdges(track, start, period, 1);
    std::vector<EdgeShape> second_inside;
    for (const EdgeShape& e : second) {
      if (std::get<1>(e) <= std::get<0>(e)) second_inside.push_back(e);
    }
    if (InstanceEdges(track, start, period, 0) != second_inside) return 1;
    int64_t valid = 2;
    while (valid < count &&
           InstanceEdges(track, start, period, valid) == second) {
      ++valid;
    }
    return valid;
  }

  const Tracks& tracks_;
  const std::vector<int32_t>& signature_;
  const std::vector<std::vector<std::pair<uint32_t, EdgeKind>>>& in_;
};

}  // namespace

std::string RepeatLabel(const RepeatRun& run) {
  return absl::StrFormat("x %d (ids %d..%d)", run.count, run.first_id,
                         run.last_id);
}

namespace {

// A run found on the graph: what it says and the nodes it covers, instance
// after instance.
struct FoundRun {
  RepeatRun run;
  std::vector<uint32_t> nodes;
};

std::vector<FoundRun> FindRuns(const VizGraph& graph) {
  const Tracks tracks = SplitIntoTracks(graph);
  const std::vector<int32_t> signature = OpSignatures(graph);
  const auto in_edges = InEdges(graph);
  const RunFinder finder(tracks, signature, in_edges);
  std::vector<FoundRun> runs;
  for (size_t track = 0; track < tracks.members.size(); ++track) {
    const std::vector<uint32_t>& seq = tracks.members[track];
    for (const Candidate& c : finder.Find(static_cast<int64_t>(track))) {
      const auto begin = seq.begin() + c.start;
      FoundRun found{{}, {begin, begin + c.count * c.period}};
      const VizNode& first = graph.nodes[found.nodes.front()];
      found.run = {first.rank, first.queue, c.count,
                   c.period,   first.id,    graph.nodes[found.nodes.back()].id};
      runs.push_back(std::move(found));
    }
  }
  return runs;
}

void SortUniqueEdges(std::vector<VizEdge>* edges) {
  auto key = [](const VizEdge& e) {
    return std::make_tuple(e.from, e.to, e.kind);
  };
  std::sort(
      edges->begin(), edges->end(),
      [&](const VizEdge& a, const VizEdge& b) { return key(a) < key(b); });
  edges->erase(std::unique(edges->begin(), edges->end(),
                           [&](const VizEdge& a, const VizEdge& b) {
                             return key(a) == key(b);
                           }),
               edges->end());
}

// The graph with `runs` folded.
VizGraph Fold(const VizGraph& graph, const std::vector<const FoundRun*>& runs) {
  const size_t n = graph.nodes.size();
  // Per node: the node drawn for it, and its run and instance (kNone: none).
  std::vector<uint32_t> drawn_as(n);
  std::vector<int64_t> run_of(n, kNone), instance_of(n, kNone);
  for (uint32_t k = 0; k < n; ++k) drawn_as[k] = k;
  VizGraph out;
  for (const FoundRun* found : runs) {
    const int64_t run = static_cast<int64_t>(out.repeats.size());
    out.repeats.push_back(found->run);
    const int64_t period = found->run.period;
    for (size_t r = 0; r < found->nodes.size(); ++r) {
      const uint32_t k = found->nodes[r];
      run_of[k] = run;
      instance_of[k] = static_cast<int64_t>(r) / period;
      drawn_as[k] = found->nodes[r % period];
    }
  }
  std::vector<uint32_t> new_index(n, 0);
  for (uint32_t k = 0; k < n; ++k) {
    if (drawn_as[k] != k) continue;
    new_index[k] = static_cast<uint32_t>(out.nodes.size());
    out.nodes.push_back(graph.nodes[k]);
    out.nodes.back().repeat = static_cast<int32_t>(run_of[k]);
  }
  for (const VizEdge& e : graph.edges) {
    // The chain from one instance to the next is what "x N" stands for.
    if (run_of[e.from] != kNone && run_of[e.from] == run_of[e.to] &&
        instance_of[e.from] != instance_of[e.to]) {
      continue;
    }
    const uint32_t from = new_index[drawn_as[e.from]];
    const uint32_t to = new_index[drawn_as[e.to]];
    if (from != to) out.edges.push_back({from, to, e.kind});
  }
  SortUniqueEdges(&out.edges);
  out.ranks = graph.ranks;
  out.input_nodes = graph.input_nodes;
  out.collective_type_mismatches = graph.collective_type_mismatches;
  for (const RepeatRun& run : out.repeats)
    out.repeat_folded_nodes += run.folded_nodes();
  return out;
}

int64_t NodesInCycles(const VizGraph& graph) {
  const NodeLayers layers = LayerNodes(graph);
  return static_cast<int64_t>(
      std::count(layers.ranked.begin(), layers.ranked.end(), 0));
}

}  // namespace

VizGraph FoldRepeats(const VizGraph& graph) {
  const std::vector<FoundRun> found = FindRuns(graph);
  if (found.empty()) return graph;
  // Moving an edge onto the drawn instance can close a cycle (an op on
  // another track reads instance 1 and feeds instance 3); dot lays out cycles
  // slowly and the layout estimate cannot see them, so a run that makes one
  // is not folded. Runs are tried in order in groups, each group on top of
  // those kept, and a group that makes a cycle split in halves: one fold of
  // the graph when no run makes one (a fold per run was quadratic: minutes
  // on a 308k-node trace with thousands of runs).
  const int64_t cycles_before = NodesInCycles(graph);
  std::vector<const FoundRun*> kept;
  std::vector<std::pair<size_t, size_t>> pending = {{0, found.size()}};
  while (!pending.empty()) {
    const auto [begin, end] = pending.back();
    pending.pop_back();
    const size_t before = kept.size();
    for (size_t i = begin; i < end; ++i) kept.push_back(&found[i]);
    if (NodesInCycles(Fold(graph, kept)) <= cycles_before) continue;
    kept.resize(before);
    if (end - begin == 1) continue;  // this run alone makes a cycle
    const size_t mid = begin + (end - begin) / 2;
    pending.push_back({mid, end});  // the second half after the first
    pending.push_back({begin, mid});
  }
  if (kept.empty()) return graph;
  return Fold(graph, kept);
}

}  // namespace et::viz
