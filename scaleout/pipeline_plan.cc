// Layers, stages, boundary bytes and memory of a synthesized pipeline; see
// pipeline_plan.h.
#include "scaleout/pipeline_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "step/memory_timeline.h"
#include "step/step_model.h"

namespace et::scaleout {
namespace {

// kLater: a forward or backward op of a recorded micro-batch after the first
// (gradient accumulation): the first stands for each of them.
enum class Part : uint8_t { kForward, kBackward, kOther, kLater };

// One top-level op of the step and the node indices it spans.
struct Region {
  NodeIndex begin = 0, end = 0;  // [begin, end)
  Part part = Part::kOther;
  int64_t layer = -1;  // forward and backward regions
  int64_t ns = 0;
};

// The last step's index (et-convert stamps each op's ProfilerStep#N).
absl::StatusOr<int64_t> LastStep(const NodeModel& m) {
  int64_t step = -1;
  for (NodeIndex i = 0; i < m.size(); ++i) step = std::max(step, m.step(i));
  if (step >= 0) return step;
  return absl::FailedPreconditionError(
      "the trace records no training step (no op of a ProfilerStep#N), so it "
      "has no forward/backward structure to split into pipeline stages");
}

// A host op of the step whose parent is the step itself (ProfilerStep#N), or
// no op of the step (the converter keeps no step op; the autograd thread's
// ops have no parent on the main thread).
bool IsTopLevel(const NodeModel& m, NodeIndex i, int64_t step) {
  if (m.step(i) != step || !m.on_host(i) || m.kind(i) != NodeKind::kHostOp ||
      StepNumberOfName(m.name(i)) >= 0)
    return false;
  const std::optional<NodeIndex> parent = m.Find(m.parent_id(i));
  return !parent.has_value() || m.step(*parent) != step ||
         StepNumberOfName(m.name(*parent)) >= 0;
}

// The step's regions, classified; the first backward region starts the
// backward part.
std::vector<Region> Regions(const NodeModel& m, int64_t step) {
  std::vector<Region> regions;
  NodeIndex last = 0;
  for (NodeIndex i = 0; i < m.size(); ++i) {
    if (m.step(i) == step) last = i;
    if (IsTopLevel(m, i, step)) regions.push_back({i, i, Part::kOther});
  }
  bool backward_seen = false;
  for (size_t k = 0; k < regions.size(); ++k) {
    Region& r = regions[k];
    r.end = k + 1 < regions.size() ? regions[k + 1].begin : last + 1;
    bool backward = false, optimizer = false;
    for (NodeIndex i = r.begin; i < r.end; ++i) {
      backward |= m.role(i) == NodeRole::kBackward ||
                  m.role(i) == NodeRole::kGradAccumulation;
      optimizer |= m.role(i) == NodeRole::kOptimizer;
    }
    backward_seen |= backward;
    // zero_grad runs once a step, whichever micro-batch it precedes.
    optimizer |= absl::StartsWith(m.name(r.begin), "Optimizer.zero_grad");
    r.part = backward        ? Part::kBackward
             : optimizer     ? Part::kOther
             : backward_seen ? Part::kOther
                             : Part::kForward;
  }
  return regions;
}

// A recording of gradient accumulation runs K micro-batches a step, each a
// forward and its backward, then one optimizer step. The first micro-batch
// is the one analysed (its layers, times and activations are one recorded
// micro-batch's); the regions of the later ones are marked kLater. A later
// micro-batch starts at the first region after a backward one that reads a
// parameter and is no optimizer's; it runs to the last backward region.
// Returns K (1 without accumulation).
int64_t MarkLaterMicroBatches(
    const NodeModel& m, const absl::flat_hash_map<uint64_t, int64_t>& params,
    std::vector<Region>* regions) {
  auto reads_parameter = [&](const Region& r) {
    for (NodeIndex i = r.begin; i < r.end; ++i) {
      if (!m.on_host(i) || m.role(i) == NodeRole::kOptimizer) continue;
      for (const IoTensor& t : m.recorded_tensors(i, false))
        if (params.contains(t.storage_id)) return true;
    }
    return false;
  };
  int64_t last_backward = -1;
  for (size_t k = 0; k < regions->size(); ++k)
    if ((*regions)[k].part == Part::kBackward)
      last_backward = static_cast<int64_t>(k);
  int64_t micro_batches = 1, later_from = -1;
  bool after_backward = false;
  for (int64_t k = 0; k < last_backward; ++k) {
    const Region& r = (*regions)[k];
    if (r.part == Part::kBackward) {
      after_backward = true;
    } else if (after_backward && reads_parameter(r)) {
      ++micro_batches;
      after_backward = false;
      if (later_from < 0) later_from = k;
    }
  }
  for (int64_t k = later_from; later_from >= 0 && k <= last_backward; ++k)
    (*regions)[k].part = Part::kLater;
  return micro_batches;
}

// Gradient accumulations in a region (the outermost AccumulateGrad ops).
int64_t Accumulations(const NodeModel& m, const Region& r) {
  int64_t n = 0;
  for (NodeIndex i = r.begin; i < r.end; ++i) {
    if (m.role(i) != NodeRole::kGradAccumulation || !m.on_host(i)) continue;
    const std::optional<NodeIndex> parent = m.Find(m.parent_id(i));
    if (!parent || m.role(*parent) != NodeRole::kGradAccumulation) ++n;
  }
  return n;
}

// Layers from the forward regions (parameters read first), backward regions
// by gradient accumulations. Returns the layers found.
std::vector<PipelineLayer> AssignLayers(
    const NodeModel& m, const absl::flat_hash_map<uint64_t, int64_t>& params,
    std::vector<Region>* regions) {
  std::vector<PipelineLayer> layers;
  absl::flat_hash_set<uint64_t> seen;
  for (Region& r : *regions) {
    if (r.part != Part::kForward) continue;
    int64_t fresh = 0, bytes = 0;
    for (NodeIndex i = r.begin; i < r.end; ++i) {
      if (!m.on_host(i)) continue;
      for (const IoTensor& t : m.recorded_tensors(i, false)) {
        auto p = params.find(t.storage_id);
        if (p == params.end() || !seen.insert(t.storage_id).second) continue;
        ++fresh;
        bytes += p->second;
      }
    }
    // The ops before the first parameter's (zero_grad, position ids) open
    // the first layer.
    const bool opening = layers.size() == 1 && layers[0].parameters == 0;
    if (layers.empty() || (fresh > 0 && !opening))
      layers.push_back({r.begin, std::string(m.name(r.begin))});
    layers.back().parameters += fresh;
    layers.back().parameter_bytes += bytes;
    r.layer = static_cast<int64_t>(layers.size()) - 1;
  }
  if (layers.empty()) return layers;
  int64_t layer = static_cast<int64_t>(layers.size()) - 1;
  int64_t left = layers[layer].parameters;
  for (Region& r : *regions) {
    if (r.part != Part::kBackward) continue;
    r.layer = layer;
    left -= Accumulations(m, r);
    while (left <= 0 && layer > 0) left += layers[--layer].parameters;
  }
  return layers;
}

// Each node's region (-1: none): a host node's by its id, a device op's its
// launcher's (the host node it depends on; GPU ops' ids follow every host
// op's).
std::vector<int64_t> RegionOf(const NodeModel& m,
                              const std::vector<Region>& regions) {
  std::vector<int64_t> region_of(m.size(), -1);
  for (size_t k = 0; k < regions.size(); ++k)
    for (NodeIndex i = regions[k].begin; i < regions[k].end; ++i)
      if (m.on_host(i)) region_of[i] = static_cast<int64_t>(k);
  for (NodeIndex i = 0; i < m.size(); ++i) {
    if (m.on_host(i) || IsCommunication(m.kind(i))) continue;
    for (auto deps : {m.ctrl_deps(i), m.data_deps(i)}) {
      for (NodeIndex d : deps) {
        if (region_of[i] < 0 && m.on_host(d)) region_of[i] = region_of[d];
      }
    }
  }
  return region_of;
}

// The region of each collective of the step: the one holding the first of
// its data dependencies that a region holds (the GEMM a tensor-parallel
// all-reduce reduces, the gradients a bucket syncs); -1 when none does.
std::vector<std::pair<NodeIndex, int64_t>> CollectiveRegions(
    const NodeModel& m, int64_t step, const std::vector<int64_t>& region_of) {
  std::vector<std::pair<NodeIndex, int64_t>> out;
  for (NodeIndex i = 0; i < m.size(); ++i) {
    if (m.kind(i) != NodeKind::kCollective || m.step(i) != step) continue;
    int64_t region = -1;
    for (NodeIndex d : m.data_deps(i)) {
      if (region_of[d] >= 0) {
        region = region_of[d];
        break;
      }
    }
    out.push_back({i, region >= 0 ? region : region_of[i]});
  }
  return out;
}

// Each region's simulated time: the progress of the latest finish over its
// compute nodes from the previous region's, less the time of the
// collectives it issues (a blocking one delays what follows). Returns the
// host's time between the previous step's end and this one's first op.
int64_t TimeRegions(const NodeModel& m, int64_t step, const NodeTimes& t,
                    const std::vector<int64_t>& region_of,
                    const std::vector<std::pair<NodeIndex, int64_t>>& comms,
                    std::vector<Region>* regions) {
  std::vector<int64_t> comm_ns(regions->size(), 0);
  std::vector<int64_t> finish(regions->size(), -1);
  for (const auto& [i, region] : comms)
    if (region >= 0 && t.finish_ns[i] >= 0)
      comm_ns[region] += t.finish_ns[i] - t.start_ns[i];
  for (NodeIndex i = 0; i < m.size(); ++i) {
    if (region_of[i] < 0 || t.finish_ns[i] < 0 || IsCommunication(m.kind(i)))
      continue;
    finish[region_of[i]] = std::max(finish[region_of[i]], t.finish_ns[i]);
  }
  // The step starts when its first op does and every op of the steps before
  // it has finished (a GPU still running the last optimizer's kernels); the
  // host's time between the two steps (the Python loop, data) is returned.
  const int64_t first =
      regions->empty() ? 0 : t.start_ns[regions->front().begin];
  int64_t previous = -1;
  for (NodeIndex i = 0; i < m.size(); ++i)
    if (m.step(i) >= 0 && m.step(i) < step)
      previous = std::max(previous, t.finish_ns[i]);
  int64_t mark = std::max(first, previous);
  for (size_t k = 0; k < regions->size(); ++k) {
    Region& r = (*regions)[k];
    const int64_t end = std::max(mark, finish[k]);
    r.ns = std::max<int64_t>(0, end - mark - comm_ns[k]);
    mark = end;
  }
  return previous >= 0 ? std::max<int64_t>(0, first - previous) : 0;
}

// Bytes crossing each cut after layer k (k < layers - 1), whole batch.
void BoundaryBytes(const NodeModel& m, const std::vector<Region>& regions,
                   const absl::flat_hash_set<uint64_t>& persistent,
                   std::vector<PipelineLayer>* layers) {
  struct Crossing {
    int64_t maker = 0, reader = 0, bytes = 0;
  };
  absl::flat_hash_map<uint64_t, Crossing> made;
  std::vector<Crossing> done;  // lives ended by a new one at their address
  absl::flat_hash_set<uint64_t> inputs;
  for (const Region& r : regions) {
    if (r.part != Part::kForward) continue;
    for (NodeIndex i = r.begin; i < r.end; ++i) {
      if (!m.on_host(i)) continue;
      inputs.clear();
      for (const IoTensor& t : m.recorded_tensors(i, false)) {
        inputs.insert(t.storage_id);
        auto it = made.find(t.storage_id);
        if (it == made.end() || persistent.contains(t.storage_id)) continue;
        it->second.reader = std::max(it->second.reader, r.layer);
        it->second.bytes =
            std::max<int64_t>(it->second.bytes, t.extent_bytes());
      }
      for (const IoTensor& t : m.recorded_tensors(i, true)) {
        if (t.storage_id == 0 || persistent.contains(t.storage_id)) continue;
        auto [it, inserted] =
            made.try_emplace(t.storage_id, Crossing{r.layer, r.layer, 0});
        // An output at an address none of the inputs hold is a new
        // allocation: the observer names storages by address, so a freed
        // one's id comes back (storage_lives.h's rule).
        if (!inserted && !inputs.contains(t.storage_id)) {
          done.push_back(it->second);
          it->second = Crossing{r.layer, r.layer, 0};
        }
        it->second.bytes =
            std::max<int64_t>(it->second.bytes, t.extent_bytes());
      }
    }
  }
  for (const auto& [storage, c] : made) done.push_back(c);
  for (const Crossing& c : done) {
    for (int64_t k = c.maker; k < c.reader; ++k)
      (*layers)[k].out_bytes += c.bytes;
  }
}

// Contiguous stages minimizing the slowest stage (forward + backward):
// the last layer of each stage.
std::vector<int64_t> BalancedCuts(const std::vector<PipelineLayer>& layers,
                                  int64_t pp) {
  const int64_t n = static_cast<int64_t>(layers.size());
  std::vector<int64_t> prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + layers[i].forward_ns + layers[i].backward_ns;
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  // best[s][i]: the slowest stage when layers [0, i) make s stages.
  std::vector<std::vector<int64_t>> best(pp + 1,
                                         std::vector<int64_t>(n + 1, kInf));
  std::vector<std::vector<int64_t>> from(pp + 1, std::vector<int64_t>(n + 1));
  best[0][0] = 0;
  for (int64_t s = 1; s <= pp; ++s) {
    for (int64_t i = s; i <= n; ++i) {
      for (int64_t j = s - 1; j < i; ++j) {
        if (best[s - 1][j] == kInf) continue;
        const int64_t v = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        if (v < best[s][i]) {
          best[s][i] = v;
          from[s][i] = j;
        }
      }
    }
  }
  std::vector<int64_t> last(pp);
  for (int64_t s = pp, i = n; s >= 1; --s) {
    last[s - 1] = i - 1;
    i = from[s][i];
  }
  return last;
}

// Where each node of the analysed micro-batch runs: its chunk (-1: none) and
// part, and each chunk's last forward node.
struct PassMap {
  std::vector<int64_t> chunk_at;
  std::vector<Part> part_at;
  std::vector<NodeIndex> forward_end;  // by chunk
};

// A non-persistent life's place in its chunk's passes: the chunk (-1: none
// of the analysed micro-batch), the node its bytes count from, and whether
// it is an activation that chunk's forward made and keeps for its backward
// (stashed: held while the micro-batch is in flight).
struct LifePlace {
  int64_t chunk = -1;
  NodeIndex start = 0;
  bool stash = false;
};

// An activation belongs to the chunk whose forward made it: the one holding
// its first node, or, for one made inside a folded forward op that the
// memory model starts in the backward (a one-step trace's backward-only
// life; a hidden one it dates at the backward's first node, in the last
// chunk's region), the chunk of the forward op the trace's ids name as its
// maker, else of its first reader, whose backward reads what its forward
// saved. One the ids say the backward made, or a one-step trace's
// backward-only life no ids date, is its chunk's transient (the memory
// model's reading: made by the backward op that first uses it).
LifePlace PlaceLife(const NodeModel& m, const PassMap& at,
                    const StorageLife& l) {
  auto chunk_of = [&](NodeIndex i) {
    return i < m.size() ? at.chunk_at[i] : int64_t{-1};
  };
  const int64_t c = chunk_of(l.first);
  if (c < 0) return {};
  if (l.kind != MemoryKind::kActivation) return {c, l.first, false};
  if (at.part_at[l.first] == Part::kForward) return {c, l.first, true};
  if (at.part_at[l.first] != Part::kBackward) return {c, l.first, false};
  const int64_t made = chunk_of(l.hidden_maker);
  if (made >= 0 && at.part_at[l.hidden_maker] == Part::kForward)
    return {made, l.hidden_maker, true};
  if (made >= 0 && at.part_at[l.hidden_maker] == Part::kBackward)
    return {c, l.first, false};
  // No maker in the micro-batch (other schemas; an id from before it): one
  // the memory model dates at the backward's start is a saved tensor of the
  // forward of its first reader's chunk, held from that forward's end.
  const int64_t reader = chunk_of(l.first_use);
  if (l.first_use != l.first && reader >= 0 &&
      at.part_at[l.first_use] == Part::kBackward)
    return {reader, at.forward_end[reader], true};
  return {c, l.first, false};
}

// Per stage its persistent bytes by kind, per chunk one pass's stash and
// transient peak (whole batch), from the lives of the analysed step.
void StageMemory(const NodeModel& m, const std::vector<Region>& regions,
                 const std::vector<int64_t>& chunk_of_layer,
                 const std::vector<StorageLife>& lives,
                 std::vector<PipelineChunk>* chunks,
                 std::vector<PipelineStage>* stages) {
  const int64_t pp = static_cast<int64_t>(stages->size());
  const int64_t nc = static_cast<int64_t>(chunks->size());
  // Where a node's pass runs: its chunk (transients) and that chunk's stage
  // (persistent storages).
  std::vector<int64_t> stage_of_layer(chunk_of_layer.size());
  for (size_t l = 0; l < chunk_of_layer.size(); ++l)
    stage_of_layer[l] = (*chunks)[chunk_of_layer[l]].stage;
  PassMap at{std::vector<int64_t>(m.size(), -1),
             std::vector<Part>(m.size(), Part::kOther),
             std::vector<NodeIndex>(nc, 0)};
  absl::flat_hash_map<uint64_t, int64_t> stage_of_storage;
  // A gradient's stage is the backward's that accumulates it (zero_grad,
  // before the first layer's forward, touches every one).
  absl::flat_hash_map<uint64_t, int64_t> backward_stage_of_storage;
  for (const Region& r : regions) {
    const int64_t s = r.layer >= 0 ? stage_of_layer[r.layer] : -1;
    for (NodeIndex i = r.begin; i < r.end; ++i) {
      at.chunk_at[i] = r.layer >= 0 ? chunk_of_layer[r.layer] : -1;
      at.part_at[i] = r.part;
      if (r.part == Part::kForward && at.chunk_at[i] >= 0)
        at.forward_end[at.chunk_at[i]] = i;
      if (s < 0) continue;
      for (bool out : {false, true})
        for (const IoTensor& t : m.recorded_tensors(i, out)) {
          stage_of_storage.try_emplace(t.storage_id, s);
          if (r.part == Part::kBackward &&
              m.role(i) == NodeRole::kGradAccumulation)
            backward_stage_of_storage.try_emplace(t.storage_id, s);
        }
    }
  }
  // The device the answer is about: the one holding the most bytes.
  std::map<int32_t, int64_t> by_device;
  for (const StorageLife& l : lives) by_device[l.device] += l.bytes;
  int32_t device = kHostDevice;
  int64_t most = -1;
  for (const auto& [d, b] : by_device)
    if (b > most) std::tie(device, most) = std::make_pair(d, b);
  std::vector<std::vector<std::pair<NodeIndex, int64_t>>> events(nc);
  for (size_t k = 0; k < lives.size(); ++k) {
    const StorageLife& l = lives[k];
    if (l.device != device) continue;
    const int64_t bytes = AllocatedBytes(l.device, l.bytes);
    if (l.persistent) {
      auto it = stage_of_storage.find(l.storage_id);
      int64_t s = it != stage_of_storage.end() ? it->second : -1;
      if (auto g = backward_stage_of_storage.find(l.storage_id);
          l.kind == MemoryKind::kGradient &&
          g != backward_stage_of_storage.end())
        s = g->second;
      if (s < 0 && l.owner >= 0) {
        auto o = stage_of_storage.find(lives[l.owner].storage_id);
        if (o != stage_of_storage.end()) s = o->second;
      }
      for (int64_t t = 0; t < pp; ++t) {
        if (s >= 0 ? t != s : (l.kind != MemoryKind::kWorkspace && t != 0))
          continue;
        (*stages)[t].persistent_bytes += bytes;
        (*stages)[t].peak_parts[static_cast<int>(l.kind)] += bytes;
      }
      continue;
    }
    const LifePlace place = PlaceLife(m, at, l);
    if (place.chunk < 0) continue;
    if (place.stash) (*chunks)[place.chunk].activation_bytes += bytes;
    events[place.chunk].push_back({place.start, bytes});
    events[place.chunk].push_back({std::max(place.start, l.last) + 1, -bytes});
  }
  for (int64_t c = 0; c < nc; ++c) {
    std::sort(events[c].begin(), events[c].end());
    int64_t live = 0, peak = 0;
    for (size_t k = 0; k < events[c].size(); ++k) {
      live += events[c][k].second;
      if (k + 1 == events[c].size() ||
          events[c][k + 1].first != events[c][k].first)
        peak = std::max(peak, live);
    }
    PipelineChunk& ch = (*chunks)[c];
    ch.transient_peak_bytes = std::max(peak, ch.activation_bytes);
  }
  for (int64_t s = 0; s < pp; ++s) (*stages)[s].device = device;
}

// The refusals once the step is read: no forward or backward ops, fewer
// layers than stages.
absl::Status CheckLayers(const PipelinePlan& plan, bool has_backward) {
  if (plan.layers.empty() || !has_backward) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "step %d has %s: pipeline stages need a training step's forward and "
        "backward ops (autograd_backward stamps; an inference trace or one "
        "converted without them has none)",
        plan.step, plan.layers.empty() ? "no forward ops" : "no backward ops"));
  }
  const int64_t n = static_cast<int64_t>(plan.layers.size());
  if (plan.options.pp <= n) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "pp=%d but step %d's forward has layer blocks: %d (an op reading "
      "parameters no earlier op read starts one: %s): at most pp=%d",
      plan.options.pp, plan.step, n,
      absl::StrJoin(plan.layers, ", ",
                    [](std::string* out, const PipelineLayer& l) {
                      out->append(l.first_op);
                    }),
      n));
}

// "the repeated block of 6 layers from aten::layer_norm (layer 2), 4 times".
std::string BlocksText(const PipelinePlan& plan) {
  const RepeatedBlocks& b = plan.blocks;
  if (b.first_layer.empty())
    return absl::StrFormat("its %d layer blocks repeat no sequence of layers",
                           plan.layers.size());
  return absl::StrFormat(
      "its repeated block of %d layers from %s (layer %d) %d times",
      b.layers_per_block, plan.layers[b.first_layer[0]].first_op,
      b.first_layer[0], b.first_layer.size());
}

// The repeated blocks of each model chunk: --pp-split's, checked against the
// blocks found, or interleaved's equal ones.
absl::StatusOr<std::vector<int64_t>> BlocksPerChunk(const PipelinePlan& plan) {
  const PipelineOptions& o = plan.options;
  const int64_t chunks = o.pp * o.chunks;
  const int64_t blocks = static_cast<int64_t>(plan.blocks.first_layer.size());
  const bool interleaved = o.schedule == PpSchedule::kInterleaved;
  if (o.split.empty()) {
    if (blocks > 0 && blocks % chunks == 0)
      return std::vector<int64_t>(chunks, blocks / chunks);
    return absl::FailedPreconditionError(absl::StrFormat(
        "--pp-schedule interleaved:%d on pp=%d needs the model's blocks in "
        "pp x V = %d equal chunks, but step %d has %d blocks (%s)",
        o.chunks, o.pp, chunks, plan.step, blocks, BlocksText(plan)));
  }
  const std::string given = absl::StrJoin(o.split, ",");
  if (static_cast<int64_t>(o.split.size()) != chunks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--pp-split %s has %d entries: pp=%d needs %d (%s)", given,
        o.split.size(), o.pp, chunks,
        interleaved ? absl::StrFormat("one per model chunk, pp x V with "
                                      "interleaved:%d",
                                      o.chunks)
                    : std::string("one per stage")));
  }
  int64_t sum = 0;
  for (size_t c = 0; c < o.split.size(); ++c) {
    if (o.split[c] < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--pp-split %s: %s %d gets %d blocks, each needs at least 1", given,
          interleaved ? "model chunk" : "stage", c, o.split[c]));
    }
    sum += o.split[c];
  }
  if (sum != blocks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--pp-split %s counts %d blocks, but step %d has %d (%s)", given, sum,
        plan.step, blocks, BlocksText(plan)));
  }
  return o.split;
}

// The last layer of each model chunk (P x V, model order): the balanced cuts
// of 1f1b and gpipe without --pp-split, else after the chunk's blocks (the
// layers before the first block with the first chunk, those after the last
// with the last).
absl::StatusOr<std::vector<int64_t>> ChunkEnds(const PipelinePlan& plan) {
  const PipelineOptions& o = plan.options;
  if (o.split.empty() && o.schedule != PpSchedule::kInterleaved)
    return BalancedCuts(plan.layers, o.pp);
  ASSIGN_OR_RETURN(std::vector<int64_t> per_chunk, BlocksPerChunk(plan));
  const int64_t n = static_cast<int64_t>(plan.layers.size());
  std::vector<int64_t> ends;
  int64_t block = 0;
  for (size_t c = 0; c < per_chunk.size(); ++c) {
    block += per_chunk[c];
    ends.push_back(
        c + 1 == per_chunk.size() ? n - 1 : plan.blocks.first_layer[block] - 1);
  }
  return ends;
}

// The chunks and stages from the cuts: their layers, times per micro-batch,
// boundary bytes and share of the rest. Fills `chunk_of_layer` and each
// stage's share of the parameters' bytes.
absl::Status MakeStages(PipelinePlan* plan,
                        std::vector<int64_t>* chunk_of_layer,
                        std::vector<double>* param_share) {
  const PipelineOptions& o = plan->options;
  const int64_t mb = o.micro_batches;
  ASSIGN_OR_RETURN(const std::vector<int64_t> last, ChunkEnds(*plan));
  const int64_t nc = static_cast<int64_t>(last.size());
  chunk_of_layer->assign(plan->layers.size(), 0);
  int64_t param_bytes = 0;
  for (const PipelineLayer& l : plan->layers) param_bytes += l.parameter_bytes;
  std::vector<int64_t> stage_bytes(o.pp, 0);
  for (int64_t c = 0; c < nc; ++c) {
    PipelineChunk ch;
    ch.stage = c % o.pp;
    ch.index = c / o.pp;
    ch.first_layer = c == 0 ? 0 : last[c - 1] + 1;
    ch.last_layer = last[c];
    int64_t fwd = 0, bwd = 0;
    for (int64_t l = ch.first_layer; l <= ch.last_layer; ++l) {
      (*chunk_of_layer)[l] = c;
      fwd += plan->layers[l].forward_ns;
      bwd += plan->layers[l].backward_ns;
      stage_bytes[ch.stage] += plan->layers[l].parameter_bytes;
    }
    ch.forward_ns = (fwd + mb / 2) / mb;
    ch.backward_ns = (bwd + mb / 2) / mb;
    ch.send_bytes =
        c + 1 < nc ? (plan->layers[ch.last_layer].out_bytes + mb - 1) / mb : 0;
    plan->chunks.push_back(ch);
  }
  for (int64_t s = 0; s < o.pp; ++s) {
    PipelineStage st;
    for (const PipelineChunk& ch : plan->chunks) {
      if (ch.stage != s) continue;
      if (ch.index == 0) st.first_layer = ch.first_layer;
      st.last_layer = ch.last_layer;
      st.forward_ns += ch.forward_ns;
      st.backward_ns += ch.backward_ns;
      st.send_bytes += ch.send_bytes;
    }
    const double share = param_bytes > 0 ? static_cast<double>(stage_bytes[s]) /
                                               static_cast<double>(param_bytes)
                                         : 1.0 / static_cast<double>(o.pp);
    param_share->push_back(share);
    st.other_ns =
        static_cast<int64_t>(static_cast<double>(plan->other_ns) * share);
    plan->stages.push_back(st);
  }
  return absl::OkStatus();
}

// Each collective on its stage: a gradient sync (on the data-parallel group,
// or stamped grad_sync) on every stage with its parameters' share; one of a
// layer on that layer's stage, per micro-batch; one of no layer (the
// optimizer's) once on every stage.
void PlaceCollectives(const NodeModel& m, const std::vector<Region>& regions,
                      const std::vector<std::pair<NodeIndex, int64_t>>& comms,
                      const std::vector<int64_t>& chunk_of_layer,
                      const std::vector<double>& param_share,
                      PipelinePlan* plan) {
  const PipelineOptions& o = plan->options;
  for (const auto& [i, region] : comms) {
    const Region* r = region >= 0 ? &regions[region] : nullptr;
    const bool syncs_gradients =
        m.comm(i)->grad_sync ||
        (!o.dp_group_name.empty() &&
         m.string(m.comm(i)->pg_name) == o.dp_group_name);
    if (syncs_gradients) {
      for (int64_t s = 0; s < o.pp; ++s)
        plan->collectives.push_back({i, s, true, true, param_share[s]});
    } else if (r != nullptr && r->layer >= 0) {
      const int64_t c = chunk_of_layer[r->layer];
      plan->collectives.push_back(
          {i, plan->chunks[c].stage, r->part != Part::kForward, false, 1.0, c});
    } else {
      for (int64_t s = 0; s < o.pp; ++s)
        plan->collectives.push_back({i, s, true, true});
    }
  }
}

// Each stage's peak: persistent + the most its passes hold at once, walking
// its order: a pass's transient peak over the stashes of the forwards before
// it whose backward has not run (each 1/M of the batch's; a backward's own
// stash is in its transient peak).
void StagePeaks(PipelinePlan* plan) {
  const PipelineOptions& o = plan->options;
  const int64_t mb = o.micro_batches;
  for (int64_t s = 0; s < o.pp; ++s) {
    PipelineStage& st = plan->stages[s];
    int64_t held = 0, count = 0, peak = 0;
    int64_t peak_others = 0, peak_stash = 0, peak_transient = 0;
    for (const PipelinePass& pass :
         PassOrder(o.schedule, o.pp, mb, o.chunks, s)) {
      const PipelineChunk& c = plan->chunks[pass.chunk * o.pp + s];
      const int64_t stash = (c.activation_bytes + mb - 1) / mb;
      const int64_t transient = (c.transient_peak_bytes + mb - 1) / mb;
      const int64_t others = held - (pass.backward ? stash : 0);
      if (others + transient > peak) {
        peak = others + transient;
        std::tie(peak_others, peak_stash, peak_transient) =
            std::make_tuple(others, stash, transient);
      }
      held += pass.backward ? -stash : stash;
      count += pass.backward ? -1 : 1;
      st.in_flight = std::max(st.in_flight, count);
    }
    for (const PipelineChunk& c : plan->chunks) {
      if (c.stage != s) continue;
      st.activation_bytes += c.activation_bytes;
      st.transient_peak_bytes =
          std::max(st.transient_peak_bytes, c.transient_peak_bytes);
    }
    st.peak_bytes = st.persistent_bytes + peak;
    st.peak_parts[static_cast<int>(MemoryKind::kActivation)] +=
        peak_others + peak_stash;
    st.peak_parts[static_cast<int>(MemoryKind::kTemporary)] +=
        peak_transient - peak_stash;
  }
}

// When the schedule's last pass ends on these chunks without communication:
// each rank runs its passes (pipeline_order.h) in order, a forward after the
// same micro-batch's forward through the previous model chunk, a backward
// after its backward through the next one. 0 if the order cannot finish.
int64_t ScheduleSpanNs(const PipelinePlan& plan) {
  const PipelineOptions& o = plan.options;
  const int64_t pp = o.pp, mb = o.micro_batches;
  const int64_t nc = static_cast<int64_t>(plan.chunks.size());
  std::vector<const PipelineChunk*> by_model(nc, nullptr);
  for (const PipelineChunk& c : plan.chunks) {
    const int64_t g = c.index * pp + c.stage;
    if (g < 0 || g >= nc) return 0;
    by_model[g] = &c;
  }
  // finish[direction][model chunk][micro-batch], -1 not yet run.
  std::vector<std::vector<std::vector<int64_t>>> finish(
      2, std::vector<std::vector<int64_t>>(nc, std::vector<int64_t>(mb, -1)));
  std::vector<std::vector<PipelinePass>> order(pp);
  std::vector<size_t> next(pp, 0);
  std::vector<int64_t> free_at(pp, 0);
  size_t left = 0;
  for (int64_t s = 0; s < pp; ++s) {
    order[s] = PassOrder(o.schedule, pp, mb, o.chunks, s);
    left += order[s].size();
  }
  int64_t span = 0;
  for (bool progress = true; left > 0 && progress;) {
    progress = false;
    for (int64_t s = 0; s < pp; ++s) {
      while (next[s] < order[s].size()) {
        const PipelinePass& p = order[s][next[s]];
        const int64_t g = p.chunk * pp + s;
        if (g >= nc || by_model[g] == nullptr) return 0;
        const int64_t before = p.backward ? g + 1 : g - 1;
        int64_t ready = free_at[s];
        if (before >= 0 && before < nc) {
          const int64_t dep = finish[p.backward][before][p.micro_batch];
          if (dep < 0) break;
          ready = std::max(ready, dep);
        }
        const int64_t ns =
            p.backward ? by_model[g]->backward_ns : by_model[g]->forward_ns;
        free_at[s] = ready + ns;
        finish[p.backward][g][p.micro_batch] = free_at[s];
        span = std::max(span, free_at[s]);
        ++next[s];
        --left;
        progress = true;
      }
    }
  }
  return left == 0 ? span : 0;
}

// The analytic bubbles: of balanced stages, and of the stages found.
void Bubbles(PipelinePlan* plan) {
  const int64_t pp = plan->options.pp, mb = plan->options.micro_batches;
  const int64_t v = plan->options.chunks;
  plan->analytic_bubble =
      static_cast<double>(pp - 1) / static_cast<double>(v * mb + pp - 1);
  plan->analytic_bubble_ratio =
      static_cast<double>(pp - 1) / static_cast<double>(v * mb);
  int64_t slowest = 0, sum = 0, slowest_chunk = 0;
  for (const PipelineStage& st : plan->stages) {
    slowest = std::max(slowest, st.forward_ns + st.backward_ns);
    sum += st.forward_ns + st.backward_ns;
  }
  for (const PipelineChunk& c : plan->chunks)
    slowest_chunk = std::max(slowest_chunk, c.forward_ns + c.backward_ns);
  double span = static_cast<double>(ScheduleSpanNs(*plan));
  if (span <= 0)
    span = v == 1
               ? static_cast<double>((mb - 1) * slowest + sum)
               : static_cast<double>(mb * slowest + (pp - 1) * slowest_chunk);
  const double mean = static_cast<double>(sum) / static_cast<double>(pp);
  if (span > 0)
    plan->staged_bubble = 1.0 - static_cast<double>(mb) * mean / span;
  if (mean > 0) plan->imbalance = static_cast<double>(slowest) / mean;
}

std::string PlanNote(const PipelinePlan& plan) {
  std::vector<std::string> parts;
  const PipelineOptions& o = plan.options;
  for (const PipelineChunk& c : plan.chunks) {
    const std::string where =
        o.chunks > 1 ? absl::StrFormat("stage %d chunk %d", c.stage, c.index)
                     : absl::StrFormat("stage %d", c.stage);
    parts.push_back(absl::StrFormat(
        "%s: layers %d-%d (%s .. %s), forward %.3f + backward %.3f ms "
        "per micro-batch, sends %d bytes",
        where, c.first_layer, c.last_layer, plan.layers[c.first_layer].first_op,
        plan.layers[c.last_layer].first_op, c.forward_ns / 1e6,
        c.backward_ns / 1e6, c.send_bytes));
  }
  const std::string cut =
      !o.split.empty()
          ? absl::StrFormat("blocks per %s %s as --pp-split gives (%s)",
                            o.chunks > 1 ? "chunk" : "stage",
                            absl::StrJoin(o.split, ","), BlocksText(plan))
      : o.schedule == PpSchedule::kInterleaved
          ? absl::StrFormat("%d equal chunks of %s", o.pp * o.chunks,
                            BlocksText(plan))
          : std::string("stages balanced by compute time");
  const int64_t k = plan.recorded_micro_batches;
  const std::string rule =
      k > 1 ? absl::StrFormat(
                  "the recorded step ran %d micro-batches of gradient "
                  "accumulation: its first is analysed, and each micro-batch "
                  "here costs %d/%d of its time and activations",
                  k, k, o.micro_batches)
            : absl::StrFormat(
                  "each micro-batch 1/%d of the recorded batch's time and "
                  "activations",
                  o.micro_batches);
  return absl::StrFormat(
      "pipeline parallelism: synthesized pp=%d, %d micro-batches, %s "
      "schedule, from step %d's %d layer blocks (%s; %s); %s",
      o.pp, o.micro_batches, PpScheduleText(o.schedule, o.chunks), plan.step,
      plan.layers.size(), rule, cut, absl::StrJoin(parts, "; "));
}

std::vector<LayerSignature> Signatures(
    const std::vector<PipelineLayer>& layers) {
  std::vector<LayerSignature> out;
  out.reserve(layers.size());
  for (const PipelineLayer& l : layers)
    out.push_back({l.first_op, l.parameters, l.parameter_bytes});
  return out;
}

}  // namespace

absl::StatusOr<PipelinePlan> PlanPipeline(const NodeModel& m,
                                          const NodeTimes& times,
                                          const std::vector<StorageLife>& lives,
                                          const PipelineOptions& options) {
  if (options.pp < 2 || options.micro_batches < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pp=%d with %d micro-batches: a pipeline needs pp >= 2 and at least "
        "one micro-batch",
        options.pp, options.micro_batches));
  }
  if (options.schedule == PpSchedule::kInterleaved)
    RETURN_IF_ERROR(
        CheckInterleaved(options.pp, options.micro_batches, options.chunks));
  auto step = LastStep(m);
  if (!step.ok()) return step.status();
  PipelinePlan plan;
  plan.options = options;
  plan.step = *step;
  std::vector<Region> regions = Regions(m, *step);
  absl::flat_hash_map<uint64_t, int64_t> params;  // storage -> bytes
  absl::flat_hash_set<uint64_t> persistent;
  for (const StorageLife& l : FindStorageLives(m).lives) {
    if (!l.persistent || l.storage_id == 0) continue;
    persistent.insert(l.storage_id);
    if (l.kind == MemoryKind::kParameter) params[l.storage_id] = l.bytes;
  }
  plan.recorded_micro_batches = MarkLaterMicroBatches(m, params, &regions);
  plan.layers = AssignLayers(m, params, &regions);
  RETURN_IF_ERROR(CheckLayers(
      plan, std::any_of(regions.begin(), regions.end(), [](const Region& r) {
        return r.part == Part::kBackward;
      })));
  plan.blocks = FindRepeatedBlocks(Signatures(plan.layers));
  const std::vector<int64_t> region_of = RegionOf(m, regions);
  const std::vector<std::pair<NodeIndex, int64_t>> comms =
      CollectiveRegions(m, plan.step, region_of);
  plan.other_ns = TimeRegions(m, plan.step, times, region_of, comms, &regions);
  // The analysed micro-batch stands for the recorded batch's K: times and
  // bytes of the whole batch are K times its own.
  const int64_t k = plan.recorded_micro_batches;
  for (const Region& r : regions) {
    if (r.part == Part::kLater) continue;
    const int64_t ns = r.part == Part::kOther ? r.ns : r.ns * k;
    if (r.part == Part::kForward) plan.layers[r.layer].forward_ns += ns;
    if (r.part == Part::kBackward) plan.layers[r.layer].backward_ns += ns;
    (r.part == Part::kForward    ? plan.forward_ns
     : r.part == Part::kBackward ? plan.backward_ns
                                 : plan.other_ns) += ns;
  }
  BoundaryBytes(m, regions, persistent, &plan.layers);
  for (PipelineLayer& l : plan.layers) l.out_bytes *= k;
  std::vector<int64_t> chunk_of_layer;
  std::vector<double> param_share;
  RETURN_IF_ERROR(MakeStages(&plan, &chunk_of_layer, &param_share));
  PlaceCollectives(m, regions, comms, chunk_of_layer, param_share, &plan);
  StageMemory(m, regions, chunk_of_layer, lives, &plan.chunks, &plan.stages);
  for (PipelineChunk& c : plan.chunks) {
    c.activation_bytes *= k;
    c.transient_peak_bytes *= k;
  }
  StagePeaks(&plan);
  Bubbles(&plan);
  plan.note = PlanNote(plan);
  return plan;
}

absl::StatusOr<int64_t> PipelineLayerCount(const NodeModel& m) {
  auto step = LastStep(m);
  if (!step.ok()) return step.status();
  PipelinePlan plan;
  plan.options.pp = 1;
  plan.step = *step;
  std::vector<Region> regions = Regions(m, *step);
  absl::flat_hash_map<uint64_t, int64_t> params;
  for (const StorageLife& l : FindStorageLives(m).lives)
    if (l.persistent && l.storage_id != 0 && l.kind == MemoryKind::kParameter)
      params[l.storage_id] = l.bytes;
  plan.layers = AssignLayers(m, params, &regions);
  RETURN_IF_ERROR(CheckLayers(
      plan, std::any_of(regions.begin(), regions.end(), [](const Region& r) {
        return r.part == Part::kBackward;
      })));
  return static_cast<int64_t>(plan.layers.size());
}

}  // namespace et::scaleout
