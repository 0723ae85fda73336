// Aligns two sequences of op-name ids, the ET thread's ops (A) against a Kineto
// thread's ops (B), when no shared id ties them. Ops may appear on one side
// only (Kineto records aten::detach that the ET omits; the ET keeps ops the
// profiler dropped), and B may hold many iterations where A holds one. The
// aligner is greedy: equal names match; after a mismatch it resynchronises at
// the nearest position where the names agree again (found with per-name
// position lists, so each step is O(log n)), giving O(n log n) per candidate
// start instead of an LCS's O(n*m). Candidate starts come from where A's
// opening names occur in B. Stateless apart from the index; not thread-safe to
// share scratch buffers.
#ifndef CONVERTER_KINETO_SEQUENCE_ALIGNER_H_
#define CONVERTER_KINETO_SEQUENCE_ALIGNER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace et::kineto {

// A name with no counterpart on the other side: never matches anything, itself
// included.
inline constexpr uint32_t kNoName = 0xFFFFFFFFu;

// For each symbol, the sorted positions where it occurs in a sequence (CSR
// layout).
class SymbolPositions {
 public:
  SymbolPositions(absl::Span<const uint32_t> sequence, uint32_t alphabet_size);
  // The first position >= `from` holding `symbol`; -1 when none.
  int64_t NextAtOrAfter(uint32_t symbol, int64_t from) const;
  absl::Span<const int32_t> Positions(uint32_t symbol) const;

 private:
  std::vector<int32_t> offsets_;  // alphabet_size + 1
  std::vector<int32_t>
      positions_;  // grouped by symbol, ascending within a group
};

struct AlignOptions {
  int lookahead = 32;        // a resync this close needs 1 confirming name
  int far_lookahead = 4096;  // up to here it needs 3
};

// Aligns all of `a` against `b` from b[b_start]. Writes, for each a position,
// its b position or -1 into `a_to_b` (resized to a.size()). Returns the matched
// count, or a smaller number as soon as it cannot reach `give_up_below`.
int64_t AlignFrom(absl::Span<const uint32_t> a, const SymbolPositions& a_index,
                  absl::Span<const uint32_t> b, const SymbolPositions& b_index,
                  int64_t b_start, const AlignOptions& options,
                  int64_t give_up_below, std::vector<int32_t>* a_to_b);

// Positions of b where an alignment of `a` may start: where a few consecutive
// names of `a` (taken at its start, or further in when those are missing from
// b) occur in b. At most `max_candidates`, ascending; {0} when nothing anchors.
std::vector<int64_t> CandidateStarts(absl::Span<const uint32_t> a,
                                     absl::Span<const uint32_t> b,
                                     const SymbolPositions& b_index,
                                     int max_candidates);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_SEQUENCE_ALIGNER_H_
