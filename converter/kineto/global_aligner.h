// Global alignment of an ET thread's op names (A) against a window of a Kineto
// thread's op names (B): the matching with the fewest one-sided ops, i.e. a
// longest common subsequence of A and a prefix of the window (ops left over at
// the window's end are free). It is Myers' O((n+m)D) shortest-edit-script
// algorithm, D being the number of one-sided ops, so it is cheap exactly when
// the two sides mostly agree, which is when it matters: the greedy aligner
// (sequence_aligner.h) can resynchronise at the wrong one of many repeats
// after a local swap and lose a whole stretch, which a global alignment does
// not. Memory is O(D^2), so D is capped and the caller keeps the greedy answer
// beyond it. Stateless; thread-compatible.
#ifndef CONVERTER_KINETO_GLOBAL_ALIGNER_H_
#define CONVERTER_KINETO_GLOBAL_ALIGNER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace et::kineto {

// Aligns all of `a` against b[b_begin, b_end). On success writes, for each a
// position, its b position or -1 into `a_to_b` (resized to a.size()) and
// returns the matched count; returns -1 (leaving `a_to_b` untouched) when more
// than `max_edits` one-sided ops would be needed. kNoName never matches.
int64_t AlignGlobal(absl::Span<const uint32_t> a, absl::Span<const uint32_t> b,
                    int64_t b_begin, int64_t b_end, int64_t max_edits,
                    std::vector<int32_t>* a_to_b);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_GLOBAL_ALIGNER_H_
