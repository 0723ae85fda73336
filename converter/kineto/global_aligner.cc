// Myers' shortest-edit-script alignment with a free end on B; see
// global_aligner.h.
#include "converter/kineto/global_aligner.h"

#include <algorithm>
#include <limits>

#include "converter/kineto/sequence_aligner.h"

namespace et::kineto {
namespace {

// A diagonal no valid path reaches (it would need ops past B's window).
constexpr int64_t kDead = std::numeric_limits<int64_t>::min() / 4;

// Where the path on diagonal k (k = x - y) starts its step-d snake, from the
// furthest x of step d-1 on diagonals k-1 and k+1 (`prev(k)`), or kDead.
// Sets *from_below when it comes from k+1 (one Kineto-only op, y + 1).
template <typename Prev>
int64_t StepStart(int64_t d, int64_t k, int64_t m, const Prev& prev,
                  bool* from_below) {
  int64_t down = kDead, right = kDead;
  if (k < d && prev(k + 1) != kDead && prev(k + 1) - k <= m) down = prev(k + 1);
  if (k > -d && prev(k - 1) != kDead) right = prev(k - 1) + 1;
  *from_below = down != kDead && down >= right;
  return std::max(down, right);
}

}  // namespace

int64_t AlignGlobal(absl::Span<const uint32_t> a, absl::Span<const uint32_t> b,
                    int64_t b_begin, int64_t b_end, int64_t max_edits,
                    std::vector<int32_t>* a_to_b) {
  const int64_t n = static_cast<int64_t>(a.size());
  b_begin = std::clamp<int64_t>(b_begin, 0, static_cast<int64_t>(b.size()));
  b_end = std::clamp<int64_t>(b_end, b_begin, static_cast<int64_t>(b.size()));
  const int64_t m = b_end - b_begin;
  auto same = [&](int64_t x, int64_t y) {
    return a[x] == b[b_begin + y] && a[x] != kNoName;
  };
  // Step d keeps the furthest x per diagonal k in [-d, d] at snaps[d*d + k+d].
  std::vector<int64_t> snaps;
  int64_t end_d = -1, end_k = 0;
  for (int64_t d = 0; d <= max_edits && end_d < 0; ++d) {
    const int64_t base = static_cast<int64_t>(snaps.size());
    snaps.resize(base + 2 * d + 1, kDead);
    const int64_t prev_base = (d - 1) * (d - 1);
    auto prev = [&](int64_t k) {
      return k < -(d - 1) || k > d - 1 ? kDead : snaps[prev_base + k + d - 1];
    };
    for (int64_t k = -d; k <= d; k += 2) {
      bool from_below = false;
      int64_t x = d == 0 ? 0 : StepStart(d, k, m, prev, &from_below);
      if (x == kDead || x > n || x - k > m || x - k < 0) continue;
      while (x < n && x - k < m && same(x, x - k)) ++x;
      snaps[base + k + d] = x;
      if (x == n) {  // all of A consumed; the rest of B is free
        end_d = d;
        end_k = k;
        break;
      }
    }
  }
  if (end_d < 0) return -1;
  // Walk back through the snapshots, recording each snake's matches.
  a_to_b->assign(a.size(), -1);
  int64_t matched = 0;
  int64_t k = end_k;
  int64_t x_end = n;
  for (int64_t d = end_d; d >= 0; --d) {
    int64_t x_start = 0;
    int64_t prev_k = k;
    if (d > 0) {
      const int64_t prev_base = (d - 1) * (d - 1);
      auto prev = [&](int64_t kk) {
        return kk < -(d - 1) || kk > d - 1 ? kDead
                                           : snaps[prev_base + kk + d - 1];
      };
      bool from_below = false;
      x_start = StepStart(d, k, m, prev, &from_below);
      prev_k = from_below ? k + 1 : k - 1;
    }
    for (int64_t x = x_start; x < x_end; ++x) {
      (*a_to_b)[x] = static_cast<int32_t>(b_begin + x - k);
      ++matched;
    }
    if (d > 0) {
      x_end = snaps[(d - 1) * (d - 1) + prev_k + d - 1];
      k = prev_k;
    }
  }
  return matched;
}

}  // namespace et::kineto
