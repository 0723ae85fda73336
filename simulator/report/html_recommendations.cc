// What the report's numbers say to change, each citing the figure it rests
// on (the step's bound side, the critical path's causes, the collectives, the
// op table, the memory verdict); see html_sections.h.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "simulator/report/html_sections.h"
#include "simulator/report/kernel_table.h"

namespace et::sim {
namespace {

struct Recommendation {
  std::string what;    // what to change
  std::string figure;  // the number it rests on, as the report prints it
};

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Host-bound: what the host does between ops, or, when its gaps are small,
// the host op that takes most.
void HostAdvice(const Report& r, std::vector<Recommendation>* out) {
  const StepBound& b = *r.step.bound;
  const CriticalWaits& w = r.critical_path_waits;
  if (w.host_gap_ns * 10 >= r.step_ns || r.ops.empty()) {
    out->push_back(
        {absl::StrFormat(
             "The step is host-bound: the host's work sets it, so a faster "
             "GPU or network barely moves it. Of the critical path, %.3f ms "
             "is host time between ops (Python, dispatch): fewer, larger ops "
             "(fused ops, torch.compile, CUDA graphs) or a larger batch per "
             "op shrink it; --host-speed predicts a faster host.",
             Ms(w.host_gap_ns)),
         absl::StrFormat("bound: %s; critical path: host time between ops "
                         "%.3f ms of the %.3f ms graph",
                         FormatStepBound(b), Ms(w.host_gap_ns),
                         Ms(r.step_ns))});
    return;
  }
  const OpRow& o = r.ops.front();
  out->push_back(
      {absl::StrFormat(
           "The step is host-bound, and the host's own ops take it (its time "
           "between ops is small): %s takes the largest share. Moving that "
           "work to the GPU, or a faster host (--host-speed predicts one), "
           "moves the step; a faster GPU or network does not.",
           o.name),
       absl::StrFormat("bound: %s; top ops: %s, %d calls, %.3f ms, %.1f%% of "
                       "compute; critical path: host time between ops %.3f ms",
                       FormatStepBound(b), o.name, o.calls, Ms(o.total_ns),
                       o.share * 100, Ms(w.host_gap_ns))});
}

// Communication: the collective that takes most, and its group.
void CommAdvice(const Report& r, std::vector<Recommendation>* out) {
  if (r.collectives.empty()) return;
  const CollectiveRow& c = r.collectives.front();
  out->push_back(
      {absl::StrFormat(
           "Communication no compute hides holds the step: %s on group %s "
           "(%d ranks, %d bytes a call) takes most of it. Overlap it with "
           "compute (DDP's buckets during the backward pass: --bucket-mb), "
           "send fewer bytes (a lower precision, ZeRO's sharded sync), or "
           "price a faster network (--topology).",
           c.type, c.group, c.group_size, c.bytes),
       absl::StrFormat("collectives: %s %s, %d calls, %.3f ms (%.1f%% of "
                       "communication), waits %.3f ms; exposed comm per "
                       "step %.3f ms",
                       c.type, c.group, c.calls, Ms(c.total_ns), c.share * 100,
                       Ms(c.wait_ns), r.step.bound->exposed_comm_us / 1e3)});
}

// GPU-bound: the op that takes most of the compute.
void GpuAdvice(const Report& r, std::vector<Recommendation>* out) {
  if (r.ops.empty()) return;
  const OpRow& o = r.ops.front();
  out->push_back(
      {absl::StrFormat(
           "The step is GPU-bound: %s takes the largest share of compute; a "
           "faster kernel for it (tensor cores: a lower precision, shapes in "
           "multiples of 8) or a faster device (--device) moves the step.",
           o.name),
       absl::StrFormat("top ops: %s, %d calls, %.3f ms, %.1f%% of compute",
                       o.name, o.calls, Ms(o.total_ns), o.share * 100)});
  // Little kernel time on tensor cores: the matmuls run on the CUDA cores.
  int64_t kernel_ns = 0, tensor_core_ns = 0;
  for (const KernelRow& k : r.kernels) {
    kernel_ns += k.total_ns;
    if (k.tensor_cores) tensor_core_ns += k.total_ns;
  }
  if (kernel_ns > 0 && tensor_core_ns * 10 < kernel_ns) {
    out->push_back(
        {"Little of the GPU's kernel time runs on tensor cores: matmuls in "
         "fp32 run on the CUDA cores. TF32 "
         "(torch.backends.cuda.matmul.allow_tf32 = True) or bf16 autocast "
         "puts them on tensor cores, several times faster.",
         TensorCoreSummary(r)});
  }
}

// Memory: over or near the device's capacity, what shrinks it.
void MemoryAdvice(const Report& r, std::vector<Recommendation>* out) {
  if (!r.memory || r.memory->capacity_bytes <= 0) return;
  const MemorySummary& m = *r.memory;
  const double used =
      static_cast<double>(m.peak_bytes) / static_cast<double>(m.capacity_bytes);
  const std::string figure = absl::StrFormat(
      "memory: predicted peak %s of %s (%s), %.0f%%",
      MemorySizeText(m.peak_bytes), MemorySizeText(m.capacity_bytes),
      m.capacity_source, used * 100);
  if (!m.fits) {
    out->push_back({absl::StrCat("It does not fit: ", m.advice, "."), figure});
  } else if (used > 0.85) {
    out->push_back(
        {"Memory is near capacity: a larger batch or sequence will not fit; "
         "activation checkpointing or ZeRO (--dp-sync zero1/2/3 at dp > 1) "
         "leave room.",
         figure});
  }
}

}  // namespace

std::string RecommendationsHtml(const Report& r) {
  std::vector<Recommendation> recs;
  if (r.step.bound) {
    switch (r.step.bound->side) {
      case BoundSide::kHost:
        HostAdvice(r, &recs);
        break;
      case BoundSide::kComm:
        CommAdvice(r, &recs);
        break;
      case BoundSide::kGpu:
        GpuAdvice(r, &recs);
        break;
    }
    // Exposed communication worth a tenth of the step, whatever bounds it.
    if (r.step.bound->side != BoundSide::kComm &&
        r.step.bound->exposed_comm_us > 0.1 * r.step.bound->step_us)
      CommAdvice(r, &recs);
  }
  MemoryAdvice(r, &recs);
  if (recs.empty()) return "";
  std::string out = "<h2>Recommendations</h2><div id=\"recommendations\">";
  for (const Recommendation& rec : recs) {
    absl::StrAppend(&out, "<div class=\"rec\">", HtmlEscape(rec.what),
                    "<div class=\"fig\">figure: ", HtmlEscape(rec.figure),
                    "</div></div>\n");
  }
  absl::StrAppend(&out, "</div>\n");
  return out;
}

}  // namespace et::sim
