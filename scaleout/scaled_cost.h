// A synthesized layout's change to one op's cost: its duration, FLOPs and
// bytes times num/den, the recorded span kept (attr recorded_span_ns), so
// that the gaps the recording measured between ops stay what they were and
// the step model scales only the op's own work (step/step_model.h).
#ifndef SCALEOUT_SCALED_COST_H_
#define SCALEOUT_SCALED_COST_H_

#include <cstdint>

#include "proto/et_def.pb.h"

namespace et::scaleout {

// `v` times num/den, rounded to the nearest.
int64_t ScaledValue(int64_t v, int64_t num, int64_t den);

// Scales node's duration (duration_ns, inclusive_dur_ns, duration_micros),
// num_ops and tensor_size by num/den; den > 0.
void ScaleNodeCost(ChakraProtoMsg::Node* node, int64_t num, int64_t den);

}  // namespace et::scaleout

#endif  // SCALEOUT_SCALED_COST_H_
