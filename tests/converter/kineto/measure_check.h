// Test-only check of a converter measure taken from a Kineto trace (a median
// over some of its events) against the same median computed independently
// from the raw JSON (kineto_test_loader.h's HostSpansByThread).
#ifndef TESTS_CONVERTER_KINETO_MEASURE_CHECK_H_
#define TESTS_CONVERTER_KINETO_MEASURE_CHECK_H_

#include <cstdint>
#include <utility>

#include "gtest/gtest.h"

namespace et::kineto::testing {

// A converter measure (median and sample count) against the same computed
// independently from the raw JSON: counts within 1% (nesting ties may
// differ), medians within 5 ns (microsecond rounding), at least `min_count`
// samples and a median above `floor_ns` (what the full profiler leaves).
inline void ExpectSameMedian(int64_t median_ns, int64_t count,
                             std::pair<int64_t, int64_t> independent,
                             int64_t min_count, int64_t floor_ns) {
  const auto [independent_ns, independent_count] = independent;
  EXPECT_GE(independent_count, min_count);
  EXPECT_NEAR(count, independent_count, independent_count / 100);
  EXPECT_NEAR(median_ns, independent_ns, 5);
  EXPECT_GT(median_ns, floor_ns);
}

}  // namespace et::kineto::testing

#endif  // TESTS_CONVERTER_KINETO_MEASURE_CHECK_H_
