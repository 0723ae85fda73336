// Overflow-checked int64 arithmetic for values that come from input files and
// flags (times, sizes, counts, ids). Hostile traces carry values such as a ts
// of 1e30 or a duration of INT64_MAX ns; plain arithmetic on them is undefined
// behaviour in C++ and, in a release build, wraps into garbage (a step of 0
// ns). Two families:
//   CheckedAdd/Sub/Mul: std::nullopt on overflow, for callers that report an
//     error naming the file and field.
//   SaturatingAdd/Mul: clamp to INT64_MIN/INT64_MAX, for accumulators (a
//     simulated clock, a sum of durations) where a saturated value is then
//     caught by one range check instead of one per operation.
// CountProduct/DimProduct: products of counts (tensor dims, elements, FLOPs),
//   the one rule for shapes: saturating, and a non-positive factor gives 0
//   (a negative dimension is a damaged shape, counted as empty).
// DoubleToInt64: converts a finite double in range; NaN, +-inf and values
// outside int64 (casting those is undefined) give std::nullopt.
// Header-only, stateless, thread-safe.
#ifndef BASE_CHECKED_MATH_H_
#define BASE_CHECKED_MATH_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "absl/types/span.h"

namespace et {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

inline int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

inline int64_t CountProduct(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return std::numeric_limits<int64_t>::max();
  return r;
}

// The product of `dims` (1 for a 0-d tensor), by CountProduct's rule.
inline int64_t DimProduct(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n = CountProduct(n, d);
  return n;
}

// 2^63 is exactly representable as a double; every double below it converts.
inline std::optional<int64_t> DoubleToInt64(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(v >= -kTwo63 && v < kTwo63)) return std::nullopt;  // NaN fails too
  return static_cast<int64_t>(v);
}

// Microseconds (a Node's duration_micros, a uint64 on the wire) to
// nanoseconds, saturating: 2^64-1 us must not become a negative duration.
inline int64_t MicrosToNanosSaturating(uint64_t us) {
  constexpr uint64_t kMaxUs =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 1000;
  if (us > kMaxUs) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(us) * 1000;
}

}  // namespace et

#endif  // BASE_CHECKED_MATH_H_
