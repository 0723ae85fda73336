// The profiler's cost inside an op's own span, measured from a Kineto trace:
// an op that computes nothing (a view, `aten::empty`: step/host_cost.h) and
// nests no op costs its dispatch without a profiler, well under a
// microsecond, yet spans 9-18 us under the full profiler (record_shapes, the
// ET observer; the torch 2.11 CPU corpus). With the nested-op gap (the cost
// outside a span, nested_op_gap.h) it is the profiler's cost per op that a
// CPU-only trace without a light profile has taken out (docs/step-model.md,
// "The unprofiled host-time model").
#ifndef CONVERTER_KINETO_VIEW_OP_SPAN_H_
#define CONVERTER_KINETO_VIEW_OP_SPAN_H_

#include <cstdint>
#include <optional>

#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_trace.h"

namespace et::kineto {

struct ViewOpSpan {
  int64_t median_ns = 0;
  int64_t ops = 0;  // leaf ops that compute nothing it is the median of
};

// Fewer such ops than this say nothing reliable about the profiler.
inline constexpr int64_t kMinViewOps = 20;

// Median duration of the CPU ops (cpu_op events) that compute nothing and
// enclose no other CPU op; nullopt below kMinViewOps.
std::optional<ViewOpSpan> MeasureViewOpSpan(const KinetoTrace& trace,
                                            const CpuOpNesting& nesting);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_VIEW_OP_SPAN_H_
