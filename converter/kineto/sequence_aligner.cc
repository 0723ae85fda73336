// Greedy resynchronising alignment of two name sequences; see
// sequence_aligner.h.
#include "converter/kineto/sequence_aligner.h"

#include <algorithm>

namespace et::kineto {
namespace {

// Tries per resync side: repeated names (aten::t, aten::view) can need a few
// looks before one whose followers also agree.
constexpr int kMaxResyncTries = 8;
// Names compared to anchor a candidate start.
constexpr int64_t kAnchorLength = 8;

// True when the `need` names after a[i] and b[j] agree (or a sequence ends
// first).
bool Confirmed(absl::Span<const uint32_t> a, int64_t i,
               absl::Span<const uint32_t> b, int64_t j, int need) {
  for (int k = 1; k <= need; ++k) {
    if (i + k >= static_cast<int64_t>(a.size()) ||
        j + k >= static_cast<int64_t>(b.size())) {
      return true;
    }
    if (a[i + k] != b[j + k] || a[i + k] == kNoName) return false;
  }
  return true;
}

// The smallest d > 0 such that `to_find` (the symbol at from[from_pos]) occurs
// at in_seq[in_pos + d] and the sequences agree after it; -1 when none within
// reach.
int64_t ResyncDistance(absl::Span<const uint32_t> from_seq, int64_t from_pos,
                       absl::Span<const uint32_t> in_seq,
                       const SymbolPositions& in_index, int64_t in_pos,
                       bool from_is_a, const AlignOptions& options) {
  const uint32_t symbol = from_seq[from_pos];
  if (symbol == kNoName) return -1;
  int64_t q = in_index.NextAtOrAfter(symbol, in_pos + 1);
  for (int tries = 0; q >= 0 && tries < kMaxResyncTries; ++tries) {
    const int64_t d = q - in_pos;
    if (d > options.far_lookahead) return -1;
    const int need = d <= options.lookahead ? 1 : 3;
    const bool ok = from_is_a ? Confirmed(from_seq, from_pos, in_seq, q, need)
                              : Confirmed(in_seq, q, from_seq, from_pos, need);
    if (ok) return d;
    q = in_index.NextAtOrAfter(symbol, q + 1);
  }
  return -1;
}

}  // namespace

SymbolPositions::SymbolPositions(absl::Span<const uint32_t> sequence,
                                 uint32_t alphabet_size)
    : offsets_(alphabet_size + 1, 0), positions_(sequence.size()) {
  for (uint32_t s : sequence) {
    if (s < alphabet_size) ++offsets_[s + 1];
  }
  for (uint32_t s = 0; s < alphabet_size; ++s) offsets_[s + 1] += offsets_[s];
  std::vector<int32_t> fill(offsets_.begin(), offsets_.end() - 1);
  for (size_t i = 0; i < sequence.size(); ++i) {
    const uint32_t s = sequence[i];
    if (s < alphabet_size) positions_[fill[s]++] = static_cast<int32_t>(i);
  }
}

absl::Span<const int32_t> SymbolPositions::Positions(uint32_t symbol) const {
  // Compared as `symbol >= size - 1`: `symbol + 1` wraps to 0 for kNoName,
  // which then read offsets_[kNoName].
  if (symbol >= offsets_.size() - 1) return {};
  return absl::MakeConstSpan(positions_.data() + offsets_[symbol],
                             offsets_[symbol + 1] - offsets_[symbol]);
}

int64_t SymbolPositions::NextAtOrAfter(uint32_t symbol, int64_t from) const {
  absl::Span<const int32_t> list = Positions(symbol);
  auto it = std::lower_bound(list.begin(), list.end(), from);
  return it == list.end() ? -1 : *it;
}

int64_t AlignFrom(absl::Span<const uint32_t> a, const SymbolPositions& a_index,
                  absl::Span<const uint32_t> b, const SymbolPositions& b_index,
                  int64_t b_start, const AlignOptions& options,
                  int64_t give_up_below, std::vector<int32_t>* a_to_b) {
  const int64_t n = static_cast<int64_t>(a.size());
  const int64_t m = static_cast<int64_t>(b.size());
  a_to_b->assign(a.size(), -1);
  int64_t matched = 0;
  int64_t i = 0;
  int64_t j = b_start;
  while (i < n && j < m) {
    if (a[i] == b[j] && a[i] != kNoName) {
      (*a_to_b)[i++] = static_cast<int32_t>(j++);
      ++matched;
      continue;
    }
    if (matched + (n - i) < give_up_below) return matched;
    if (a[i] == kNoName) {  // an ET op Kineto never recorded: skip it alone
      ++i;
      continue;
    }
    // Skip Kineto-only ops (a[i] occurs later in b) or ET-only ops (b[j] occurs
    // later in a), whichever skips fewer.
    const int64_t skip_b =
        ResyncDistance(a, i, b, b_index, j, /*from_is_a=*/true, options);
    const int64_t skip_a =
        ResyncDistance(b, j, a, a_index, i, /*from_is_a=*/false, options);
    if (skip_b >= 0 && (skip_a < 0 || skip_b <= skip_a)) {
      j += skip_b;
    } else if (skip_a >= 0) {
      i += skip_a;
    } else {  // neither recurs nearby: both are one-sided
      ++i;
      ++j;
    }
  }
  return matched;
}

std::vector<int64_t> CandidateStarts(absl::Span<const uint32_t> a,
                                     absl::Span<const uint32_t> b,
                                     const SymbolPositions& b_index,
                                     int max_candidates) {
  const int64_t n = static_cast<int64_t>(a.size());
  const int64_t k = std::min<int64_t>(kAnchorLength, n);
  std::vector<int64_t> starts;
  for (int part = 0; part < 8 && starts.empty() && k > 0; ++part) {
    int64_t p = n * part / 8;
    // Move the anchor past names Kineto lacks.
    int64_t limit = std::min(n - k, p + 64);
    while (p <= limit && std::any_of(a.begin() + p, a.begin() + p + k,
                                     [](uint32_t s) { return s == kNoName; })) {
      ++p;
    }
    if (p > limit) continue;
    for (int32_t q : b_index.Positions(a[p])) {
      if (q + k > static_cast<int64_t>(b.size())) break;
      if (!std::equal(a.begin() + p, a.begin() + p + k, b.begin() + q))
        continue;
      // Leave room for Kineto-only ops before the anchor (about 1 in 16 in
      // practice).
      starts.push_back(std::max<int64_t>(0, q - p - p / 16));
    }
  }
  if (starts.empty()) return {0};
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  if (static_cast<int64_t>(starts.size()) > max_candidates &&
      max_candidates > 1) {
    std::vector<int64_t> sampled;
    const size_t total = starts.size();
    for (int c = 0; c < max_candidates; ++c) {
      sampled.push_back(starts[total * c / max_candidates]);
    }
    sampled.erase(std::unique(sampled.begin(), sampled.end()), sampled.end());
    starts = std::move(sampled);
  }
  return starts;
}

}  // namespace et::kineto
