// Steps, measured step times and the host-time model; see step_model.h and
// docs/step-model.md for the evidence behind the model.
#include "step/step_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/checked_math.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et {
namespace {

// Times stay below 2^61 ns so that a start plus a duration cannot overflow.
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max() / 4;

}  // namespace

HostTimeModel StoredHostCostsOr(const NodeModel& graph,
                                const HostTimeModel& model) {
  std::optional<HostTimeModel> stored =
      GetHostTimeModel(graph.metadata().attr());
  if (!stored) return model;
  stored->host_speed = model.host_speed;
  return *stored;
}

int64_t StepNumberOfName(absl::string_view name) {
  int64_t n = -1;
  if (absl::ConsumePrefix(&name, "ProfilerStep#")) {
    return absl::SimpleAtoi(name, &n) && n >= 0 ? n : -1;
  }
  if (absl::ConsumePrefix(&name, "## step_") &&
      absl::ConsumeSuffix(&name, " ##")) {
    return absl::SimpleAtoi(name, &n) && n >= 0 ? n : -1;
  }
  return -1;
}

absl::string_view HostTimeModeName(HostTimeMode mode) {
  return mode == HostTimeMode::kRecorded ? "recorded" : "unprofiled";
}

absl::StatusOr<HostTimeMode> ParseHostTimeMode(absl::string_view text) {
  if (text == "unprofiled") return HostTimeMode::kUnprofiled;
  if (text == "recorded") return HostTimeMode::kRecorded;
  return absl::InvalidArgumentError(absl::StrCat(
      "--host-time '", text, "': expected 'unprofiled' or 'recorded'"));
}

StepModel StepModel::Build(const NodeModel& graph, const HostTimeModel& model) {
  StepModel m;
  m.model_ = model;

  m.nested_op_gap_ns_ = graph.info().nested_op_gap_ns;
  m.view_op_span_ns_ = graph.info().view_op_span_ns;
  m.ReadNodes(graph);
  m.ReadMeasured(graph);
  m.ReadPageFaults(graph);
  m.FillGaps(graph);
  m.FillUnprofiled();
  m.AddPageFaults();
  return m;
}

void StepModel::ReadNodes(const NodeModel& graph) {
  const size_t n = graph.size();
  is_host_.assign(n, 0);
  is_wait_.assign(n, 0);
  host_ops_.assign(n, 1);
  launches_.assign(n, 0);
  launcher_.assign(n, -1);
  flops_.assign(n, 0);
  bytes_.assign(n, 0);
  computes_.assign(n, 0);
  tid_.assign(n, 0);
  recorded_start_ns_.assign(n, -1);
  recorded_ns_.assign(n, 0);
  span_ns_.assign(n, 0);
  std::vector<int64_t> step(n, -1);
  for (NodeIndex i = 0; i < n; ++i) {
    step[i] = graph.step(i);
    if (step[i] >= 0) step_ids_.push_back(step[i]);
    recorded_start_ns_[i] = graph.start_ns(i);
    recorded_ns_[i] = graph.duration_ns(i);
    span_ns_[i] = graph.recorded_span_ns(i);
    // Recorded costs only: a launcher's share goes to its kernels, and a
    // host op "computes" when the trace says it does.
    if (!graph.cost_from_shapes(i)) {
      flops_[i] = graph.flops(i);
      bytes_[i] = graph.bytes(i);
    }
    is_host_[i] = graph.kind(i) == NodeKind::kHostOp;
    is_wait_[i] = graph.is_wait(i);
    if (graph.kind(i) == NodeKind::kKernel || graph.kind(i) == NodeKind::kGemm)
      has_gpu_ops_ = true;
    if (!is_host_[i]) continue;
    host_ops_[i] = graph.host_ops(i);
    tid_[i] = graph.queue(i).number;
    computes_[i] = flops_[i] > 0 || bytes_[i] > 0;
  }
  LinkLaunchers(graph);
  ClassifyHostOps(graph);
  std::sort(step_ids_.begin(), step_ids_.end());
  step_ids_.erase(std::unique(step_ids_.begin(), step_ids_.end()),
                  step_ids_.end());
  step_index_.assign(n, -1);
  for (NodeIndex i = 0; i < n; ++i) {
    if (step[i] < 0) {
      if (!step_ids_.empty()) ++nodes_outside_steps_;
      continue;
    }
    step_index_[i] = static_cast<int32_t>(
        std::lower_bound(step_ids_.begin(), step_ids_.end(), step[i]) -
        step_ids_.begin());
  }
}

// A GPU op's launcher is the host node it depends on (its ET parent is
// usually an op folded into that node). A GPU op without FLOPs and bytes of
// its own takes an even share of its launcher's.
void StepModel::LinkLaunchers(const NodeModel& graph) {
  const size_t n = graph.size();
  for (NodeIndex i = 0; i < n; ++i) {
    if (graph.kind(i) != NodeKind::kKernel && graph.kind(i) != NodeKind::kGemm)
      continue;
    for (DepSelection sel :
         {DepSelection::kCtrlOnly, DepSelection::kDataOnly}) {
      for (NodeIndex d : sel == DepSelection::kCtrlOnly ? graph.ctrl_deps(i)
                                                        : graph.data_deps(i)) {
        if (!is_host_[d] || launcher_[i] >= 0) continue;
        launcher_[i] = d;
        ++launches_[d];
      }
    }
  }
  for (NodeIndex i = 0; i < n; ++i) {
    const int64_t l = launcher_[i];
    if (l < 0 || flops_[i] > 0 || bytes_[i] > 0) continue;
    flops_[i] = flops_[l] / launches_[l];
    bytes_[i] = bytes_[l] / launches_[l];
  }
}

// A thread holding any autograd engine op is the backward thread; each host
// op's kind follows from its name, its thread and its launches.
void StepModel::ClassifyHostOps(const NodeModel& graph) {
  const size_t n = graph.size();
  absl::flat_hash_set<int64_t> autograd_threads;
  for (NodeIndex i = 0; i < n; ++i) {
    if (is_host_[i] && IsAutogradEngineName(graph.name(i)))
      autograd_threads.insert(tid_[i]);
  }
  host_kind_.assign(n, HostOpKind::kDispatch);
  thread_role_.assign(n, HostThreadRole::kPython);
  for (NodeIndex i = 0; i < n; ++i) {
    if (!is_host_[i]) continue;
    if (autograd_threads.contains(tid_[i]))
      thread_role_[i] = HostThreadRole::kAutograd;
    host_kind_[i] =
        ClassifyHostOp(graph.name(i), thread_role_[i], launches_[i]);
  }
}

// Profiled steps: the `step_times_us` entries whose `step_names` are steps of
// this graph (all of them when the names are missing). The unprofiled step:
// `unprofiled_step_us`.
void StepModel::ReadMeasured(const NodeModel& graph) {
  const auto& meta = graph.metadata().attr();
  if (std::optional<double> us = GetDouble(meta, attr::kUnprofiledStepUs);
      us && *us > 0) {
    unprofiled_step_us_ = *us;
  }
  if (std::optional<double> us = GetDouble(meta, attr::kUnprofiledStepAfterUs);
      us && *us > 0) {
    unprofiled_step_after_us_ = *us;
  }
  unprofiled_step_blocks_us_ =
      GetDoubleList(meta, attr::kUnprofiledStepBlocksUs)
          .value_or(std::vector<double>{});
  // A graph of one iteration inside a longer profile carries no step: its
  // profiled step is the one the converter matched it to, else the span of
  // its recorded times.
  if (step_ids_.empty()) {
    if (std::optional<double> us = GetDouble(meta, attr::kMeasuredStepUs);
        us && *us > 0) {
      profiled_step_us_.push_back(*us);
      return;
    }
    if (const int64_t span = RecordedSpanNs(); span > 0) {
      profiled_step_us_.push_back(static_cast<double>(span) / 1e3);
      return;
    }
  }
  const std::vector<double> times =
      GetDoubleList(meta, attr::kStepTimesUs).value_or(std::vector<double>{});
  const std::vector<std::string> names =
      GetStringList(meta, attr::kStepNames)
          .value_or(std::vector<std::string>{});
  for (size_t k = 0; k < times.size(); ++k) {
    if (!(times[k] > 0)) continue;
    if (names.size() == times.size() && !step_ids_.empty() &&
        !std::binary_search(step_ids_.begin(), step_ids_.end(),
                            StepNumberOfName(names[k]))) {
      continue;
    }
    profiled_step_us_.push_back(times[k]);
  }
}

void StepModel::ReadPageFaults(const NodeModel& graph) {
  const auto& meta = graph.metadata().attr();
  auto count = [&](absl::string_view key) {
    const double n = GetDouble(meta, key).value_or(-1);
    return std::isfinite(n) && n >= 0 && n < 1e12 ? n : -1.0;
  };
  page_faults_.unprofiled_per_step = count(attr::kUnprofiledPageFaultsPerStep);
  profiled_page_faults_per_step_ = count(attr::kProfiledPageFaultsPerStep);
  const int64_t ns = GetInt(meta, attr::kPageFaultNs).value_or(0);
  if (ns > 0 && ns < 1000000000) page_faults_.ns_per_fault = ns;
}

// The unprofiled run's faults beyond those of the steps the prediction is
// read from, each at the recording host's measured cost, shared by the
// step's host ops in proportion to the ATen ops each stands for (which op
// faults is not recorded). Fewer faults than the base take time off, down
// to each op's dispatch.
void StepModel::AddPageFaults() {
  PageFaultCorrection& pf = page_faults_;
  const bool light = full_profiler_ns_per_op_ > 0;
  pf.base = light ? "light profile" : "recorded steps";
  pf.base_per_step = light ? model_.light_page_faults_per_step
                           : profiled_page_faults_per_step_;
  if (pf.unprofiled_per_step < 0 || pf.base_per_step < 0 ||
      pf.ns_per_fault <= 0) {
    pf.base_per_step = -1;
    return;
  }
  const double add_ns = (pf.unprofiled_per_step - pf.base_per_step) *
                        static_cast<double>(pf.ns_per_fault);
  const double ops = host_ops_per_step_ * static_cast<double>(steps());
  if (ops <= 0) return;
  // Another host (--host-speed) faults 1/speed the time, as its ops run.
  const double speed = model_.host_speed > 0 ? model_.host_speed : 1.0;
  const double per_op_ns = add_ns * static_cast<double>(steps()) / ops / speed;
  const int64_t dispatch_ns = model_.OpNs(HostOpKind::kDispatch);
  for (NodeIndex i = 0; i < is_host_.size(); ++i) {
    if (!is_host_[i] || !Runs(i, HostTimeMode::kUnprofiled)) continue;
    const int64_t floor_ns =
        std::min(unprofiled_ns_[i], host_ops_[i] * dispatch_ns);
    const int64_t add =
        static_cast<int64_t>(std::llround(per_op_ns * host_ops_[i]));
    unprofiled_ns_[i] = std::max(floor_ns, unprofiled_ns_[i] + add);
  }
  pf.ns_per_step = std::llround(add_ns / speed);
}

// Each host op's recorded distance from when it could have started: the end
// of the previous op on its thread or of its latest dependency, whichever is
// later (nested or overlapping ops: 0). Time spent waiting for another thread
// or a GPU op is not the thread's own.
void StepModel::FillGaps(const NodeModel& graph) {
  const size_t n = is_host_.size();
  recorded_gap_ns_.assign(n, 0);
  collective_wait_ns_.assign(n, 0);
  std::vector<NodeIndex> order;
  for (NodeIndex i = 0; i < n; ++i) {
    if (is_host_[i] && recorded_start_ns_[i] >= 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](NodeIndex a, NodeIndex b) {
    return std::make_pair(tid_[a], recorded_start_ns_[a]) <
           std::make_pair(tid_[b], recorded_start_ns_[b]);
  });
  int64_t end = -1;
  for (size_t k = 0; k < order.size(); ++k) {
    const NodeIndex i = order[k];
    if (k == 0 || tid_[order[k - 1]] != tid_[i]) end = -1;
    int64_t ready = end;
    for (DepSelection sel :
         {DepSelection::kDataOnly, DepSelection::kCtrlOnly}) {
      for (NodeIndex d : sel == DepSelection::kDataOnly ? graph.data_deps(i)
                                                        : graph.ctrl_deps(i)) {
        if (recorded_start_ns_[d] < 0) continue;
        ready = std::max(ready,
                         std::min(kMaxNs, recorded_start_ns_[d] + span_ns_[d]));
      }
    }
    if (end >= 0) {
      recorded_gap_ns_[i] = std::max<int64_t>(0, recorded_start_ns_[i] - ready);
      const int64_t done = HostCollectiveCompletionNs(graph, i);
      collective_wait_ns_[i] =
          std::clamp<int64_t>(std::min(done, recorded_start_ns_[i]) - ready, 0,
                              recorded_gap_ns_[i]);
    }
    end = std::max(end, std::min(kMaxNs, recorded_start_ns_[i] + span_ns_[i]));
  }
}

// When the latest host collective whose tensors op i consumes completed, as
// recorded (its call's start + comm_work_ns); -1 when none.
int64_t StepModel::HostCollectiveCompletionNs(const NodeModel& graph,
                                              NodeIndex i) const {
  int64_t done = -1;
  for (NodeIndex d : graph.data_deps(i)) {
    const CommSpec* comm = graph.comm(d);
    if (comm == nullptr || !comm->on_host || comm->work_ns <= 0 ||
        recorded_start_ns_[d] < 0)
      continue;
    done =
        std::max(done, std::min(kMaxNs, recorded_start_ns_[d] + comm->work_ns));
  }
  return done;
}

// The profiler's cost per op, from the trace itself: the median recorded time
// of host ops that stand for one op, launch nothing and compute nothing (view,
// empty, detach, ...), less their real dispatch cost.
int64_t StepModel::ProfilerNsPerOp(int64_t* samples) const {
  std::vector<int64_t> trivial;
  for (size_t i = 0; i < is_host_.size(); ++i) {
    if (is_host_[i] && host_ops_[i] == 1 && launches_[i] == 0 &&
        !computes_[i] && recorded_ns_[i] > 0) {
      trivial.push_back(recorded_ns_[i]);
    }
  }
  *samples = static_cast<int64_t>(trivial.size());
  if (trivial.empty()) return 0;
  std::nth_element(trivial.begin(), trivial.begin() + trivial.size() / 2,
                   trivial.end());
  return std::max<int64_t>(
      0, trivial[trivial.size() / 2] - model_.OpNs(HostOpKind::kDispatch));
}

// The full profiler's cost per op, from two recordings of one program: the
// profiled step and the light profile's step differ by what the full
// profiler adds beyond the light one, per op; the light profiler's own cost
// adds to it. An op in a model pays both instruments more than a probe in a
// loop does, by one factor (docs/step-model.md, "The CPU corpus"): where the
// calibration measured the full profiler over the light one too, the light
// profiler's probe cost is scaled by the model's over the probe's. Both stay
// 0 without a light step (or for a GPU trace).
void StepModel::LearnFullProfilerCost() {
  full_profiler_ns_per_op_ = 0;
  light_profiler_in_model_ns_ = 0;
  if (has_gpu_ops_ || model_.light_step_ns <= 0 ||
      model_.light_ops_per_step <= 0 || profiled_step_us_.empty())
    return;
  std::vector<double> steps_us = profiled_step_us_;
  std::sort(steps_us.begin(), steps_us.end());
  const double profiled_ns = steps_us[(steps_us.size() - 1) / 2] * 1000.0;
  const double over_light_ns =
      (profiled_ns - static_cast<double>(model_.light_step_ns)) /
      model_.light_ops_per_step;
  double light_ns = static_cast<double>(model_.light_profiler_ns_per_op);
  // A model's op pays at most 100 times a probe's: beyond that the stored
  // figures are not a recording's (a hostile .et).
  if (model_.probe_full_over_light_ns > 0 && over_light_ns > 0)
    light_ns *= std::min(
        100.0,
        over_light_ns / static_cast<double>(model_.probe_full_over_light_ns));
  const double per_op_ns = over_light_ns + light_ns;
  if (!(per_op_ns > 0 && per_op_ns < 1e15)) return;
  full_profiler_ns_per_op_ = std::llround(per_op_ns);
  light_profiler_in_model_ns_ = std::llround(light_ns);
}

// In a GPU trace the host dispatches: an op costs its dispatch and launches.
// In a CPU-only trace the host computes: an op keeps its recorded time less
// the profiler's cost per op, learned from a light profile where there is
// one, else measured in the trace: inside an op's span (a leaf op that
// computes nothing spans only the profiler) and outside it (the gap between
// two ops nested in one, where no Python runs). Without those measures, the
// median of the one-op nodes that compute nothing, with each gap less the
// nested-op gap and capped. Neither exceeds the recorded time.
void StepModel::FillUnprofiled() {
  const size_t n = is_host_.size();
  unprofiled_ns_.assign(n, 0);
  unprofiled_gap_ns_.assign(n, 0);
  double ops = 0;
  for (NodeIndex i = 0; i < n; ++i) {
    if (is_host_[i] && Runs(i, HostTimeMode::kUnprofiled)) ops += host_ops_[i];
  }
  host_ops_per_step_ = ops / static_cast<double>(steps());
  LearnFullProfilerCost();
  if (full_profiler_ns_per_op_ > 0) {
    FillUnprofiledLessProfilerCost(full_profiler_ns_per_op_);
    return;
  }
  if (spans_ns_per_op() > 0) {
    profiler_cost_from_spans_ = true;
    profiler_ns_per_op_ = spans_ns_per_op();
    FillUnprofiledLessProfilerCost(profiler_ns_per_op_);
    return;
  }
  profiler_ns_per_op_ = ProfilerNsPerOp(&profiler_samples_);
  for (NodeIndex i = 0; i < n; ++i) {
    unprofiled_ns_[i] = recorded_ns_[i];  // device ops run as recorded
    if (!is_host_[i]) continue;
    const int64_t ops = static_cast<int64_t>(host_ops_[i]);
    const int64_t floor_ns =
        ops * model_.OpNs(host_kind_[i]) +
        static_cast<int64_t>(launches_[i]) * model_.launch_ns;
    int64_t ns = floor_ns;
    if (!has_gpu_ops_)
      ns = std::max(ns, span_ns_[i] - ops * profiler_ns_per_op_);
    ns = ScaledByLayout(i, std::min(span_ns_[i], ns), floor_ns);
    int64_t gap = recorded_gap_ns_[i];
    if (!has_gpu_ops_) gap = std::max<int64_t>(0, gap - nested_op_gap_ns_);
    gap = std::min(gap, model_.GapNs(thread_role_[i]));
    // Another host (--host-speed): its ops and gaps take 1/speed the time.
    if (model_.host_speed > 0 && model_.host_speed != 1.0) {
      ns = std::llround(static_cast<double>(ns) / model_.host_speed);
      gap = std::llround(static_cast<double>(gap) / model_.host_speed);
    }
    unprofiled_ns_[i] = ns;
    unprofiled_gap_ns_[i] = RemovedByLayout(i) ? 0 : gap;
  }
}

// A CPU-only trace: each op loses the profiler's cost per op (learned from a
// light profile or measured in the trace), from the gap before it (less any
// wait for a host collective, which the simulator makes it wait) and its own
// span (down to its dispatch). The cost is not paid evenly (the observer's
// buffers flush between some ops, not others): what a node's span and gap
// cannot give is owed by the next nodes of its thread, in recorded order. No
// cap: the cost is measured.
void StepModel::FillUnprofiledLessProfilerCost(int64_t per_op_ns) {
  const int64_t dispatch_ns = model_.OpNs(HostOpKind::kDispatch);
  std::vector<NodeIndex> host;
  for (NodeIndex i = 0; i < is_host_.size(); ++i) {
    unprofiled_ns_[i] = recorded_ns_[i];
    if (is_host_[i]) host.push_back(i);
  }
  std::stable_sort(host.begin(), host.end(), [&](NodeIndex a, NodeIndex b) {
    return tid_[a] != tid_[b] ? tid_[a] < tid_[b]
                              : recorded_start_ns_[a] < recorded_start_ns_[b];
  });
  absl::flat_hash_map<int64_t, int64_t> owed_ns;  // by thread
  for (NodeIndex i : host) {
    const int64_t ops = static_cast<int64_t>(host_ops_[i]);
    int64_t& owed = owed_ns[tid_[i]];
    owed += ops * per_op_ns;
    const int64_t floor_ns = std::min(span_ns_[i], ops * dispatch_ns);
    // The wait for a host collective is the simulator's to model.
    const int64_t own_gap = recorded_gap_ns_[i] - collective_wait_ns_[i];
    const int64_t from_gap = std::min(owed, own_gap);
    owed -= from_gap;
    const int64_t from_span = std::min(owed, span_ns_[i] - floor_ns);
    owed -= from_span;
    int64_t ns = ScaledByLayout(i, span_ns_[i] - from_span, floor_ns);
    int64_t gap = own_gap - from_gap;
    if (model_.host_speed > 0 && model_.host_speed != 1.0) {
      ns = std::llround(static_cast<double>(ns) / model_.host_speed);
      gap = std::llround(static_cast<double>(gap) / model_.host_speed);
    }
    unprofiled_ns_[i] = ns;
    unprofiled_gap_ns_[i] = RemovedByLayout(i) ? 0 : gap;
  }
}

// A host op whose cost a synthesized layout scaled (its duration differs
// from its recorded span): the part of its unprofiled time above its
// dispatch scales with it, the dispatch does not (a split op is dispatched
// once, whatever its size).
int64_t StepModel::ScaledByLayout(NodeIndex i, int64_t ns,
                                  int64_t floor_ns) const {
  if (span_ns_[i] <= 0 || span_ns_[i] == recorded_ns_[i]) return ns;
  if (RemovedByLayout(i)) return 0;
  floor_ns = std::min(floor_ns, ns);
  const double scale =
      static_cast<double>(recorded_ns_[i]) / static_cast<double>(span_ns_[i]);
  return floor_ns + std::llround(static_cast<double>(ns - floor_ns) * scale);
}

// An op a synthesized layout gave to another rank (its cost scaled to 0):
// neither it nor the host time before it runs here.
bool StepModel::RemovedByLayout(NodeIndex i) const {
  return span_ns_[i] > 0 && recorded_ns_[i] <= 0;
}

int64_t StepModel::RecordedSpanNs() const {
  int64_t first = kMaxNs, last = -1;
  for (size_t i = 0; i < recorded_start_ns_.size(); ++i) {
    if (recorded_start_ns_[i] < 0 || span_ns_[i] <= 0) continue;
    first = std::min(first, recorded_start_ns_[i]);
    last =
        std::max(last, std::min(kMaxNs, recorded_start_ns_[i] + span_ns_[i]));
  }
  return last > first ? last - first : 0;
}

bool StepModel::Runs(NodeIndex i, HostTimeMode mode) const {
  return mode == HostTimeMode::kRecorded || step_ids_.empty() ||
         step_index_[i] >= 0;
}

int64_t StepModel::HostDurationNs(NodeIndex i, HostTimeMode mode) const {
  return mode == HostTimeMode::kRecorded ? recorded_ns_[i] : unprofiled_ns_[i];
}

int64_t StepModel::HostGapNs(NodeIndex i, HostTimeMode mode) const {
  return mode == HostTimeMode::kRecorded ? recorded_gap_ns_[i]
                                         : unprofiled_gap_ns_[i];
}

MeasuredStep StepModel::Measured(HostTimeMode mode) const {
  MeasuredStep m;
  if (mode == HostTimeMode::kUnprofiled) {
    if (unprofiled_step_us_) {
      m.us = unprofiled_step_us_;
      m.source = "unprofiled-run";
      m.after_recording_us = unprofiled_step_after_us_;
      m.blocks_us = unprofiled_step_blocks_us_;
    }
    return m;
  }
  if (profiled_step_us_.empty()) return m;
  double sum = 0;
  for (double us : profiled_step_us_) sum += us;
  m.us = sum / static_cast<double>(profiled_step_us_.size());
  m.source = "profiled-run";
  m.steps_us = profiled_step_us_;
  return m;
}

}  // namespace et
