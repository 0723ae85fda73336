// Sets of time intervals [start, end) in ns on one simulated timeline: merged
// into sorted, disjoint form, measured, subtracted and clipped to a window.
// What the per-step reports (step_busy, step_breakdown) measure busy time
// with. Pure functions.
#ifndef SIMULATOR_REPORT_INTERVAL_SET_H_
#define SIMULATOR_REPORT_INTERVAL_SET_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace et::sim {

using Interval = std::pair<int64_t, int64_t>;

// Sorted, disjoint intervals covering the same time as `v` (empty ones
// dropped).
std::vector<Interval> Merge(std::vector<Interval> v);

// The time sorted, disjoint `merged` covers.
int64_t Length(const std::vector<Interval>& merged);

// `v` less the time `minus` covers (both sorted and disjoint).
std::vector<Interval> Subtract(const std::vector<Interval>& v,
                               const std::vector<Interval>& minus);

// The parts of sorted, disjoint `merged` inside [lo, hi).
std::vector<Interval> Clip(const std::vector<Interval>& merged, int64_t lo,
                           int64_t hi);

// The union of two sorted, disjoint sets.
std::vector<Interval> Union(const std::vector<Interval>& a,
                            const std::vector<Interval>& b);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_INTERVAL_SET_H_
