// GPU op time on another device; see device_what_if.h.
#include "simulator/platform/device_what_if.h"

#include <algorithm>
#include <cmath>

namespace et::sim {

int64_t DeviceWhatIf::ScaleNs(int64_t recorded_ns, double flops, double bytes,
                              WhatIfStats* counts) const {
  if (recorded_ns <= 0) return recorded_ns;
  if (!(flops > 0) && !(bytes > 0)) {
    ++counts->unknown;
    return recorded_ns;
  }
  const double compute_ns = flops / recorded_.raw_flops_per_ns;
  const double memory_ns = bytes / recorded_.raw_bytes_per_ns;
  const double t = static_cast<double>(recorded_ns);
  double scaled = t;
  if (compute_ns >= memory_ns) {
    ++counts->compute_bound;
    scaled = t * recorded_.raw_flops_per_ns / target_.raw_flops_per_ns;
  } else {
    ++counts->memory_bound;
    const double moving = std::min(t, memory_ns);
    scaled = moving * recorded_.raw_bytes_per_ns / target_.raw_bytes_per_ns +
             (t - moving);
  }
  return std::max<int64_t>(1, std::llround(scaled));
}

}  // namespace et::sim
