// The profiler's cost outside an op's own span, measured from a Kineto trace:
// between two consecutive ops called from one ATen op no Python runs, yet the
// full profiler (record_shapes, the ET observer) leaves 5-10 us there (the
// torch 2.11 CPU recordings): what it does after the first op's span closes
// and before the second's opens. The same cost sits in every recorded gap
// between top-level ops, so the converter records it for the step model
// (docs/step-model.md, "The unprofiled host-time model").
#ifndef CONVERTER_KINETO_NESTED_OP_GAP_H_
#define CONVERTER_KINETO_NESTED_OP_GAP_H_

#include <cstdint>
#include <optional>

#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_trace.h"

namespace et::kineto {

struct NestedOpGap {
  int64_t median_ns = 0;
  int64_t pairs = 0;  // consecutive sibling pairs it is the median of
};

// Fewer sibling pairs than this say nothing reliable about the profiler.
inline constexpr int64_t kMinNestedPairs = 20;

// Median of start minus the previous sibling's end over consecutive CPU ops
// (cpu_op events) whose innermost enclosing event is the same CPU op (not a
// record_function range, whose children are separated by Python); nullopt
// below kMinNestedPairs. Overlapping siblings (negative gaps) are left out.
std::optional<NestedOpGap> MeasureNestedOpGap(const KinetoTrace& trace,
                                              const CpuOpNesting& nesting);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_NESTED_OP_GAP_H_
