// Unit tests of the name-sequence aligners that match an ET thread's ops (A)
// to a Kineto thread's ops (B) when no shared id ties them: the greedy
// resynchronising aligner (converter/kineto/sequence_aligner.h), its candidate
// starts and position index, and the global Myers aligner
// (converter/kineto/global_aligner.h) that repairs what the greedy one loses.
// Names are small integers; each test says which ops are one-sided.
#include "converter/kineto/sequence_aligner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "converter/kineto/global_aligner.h"

namespace et::kineto {
namespace {

using Seq = std::vector<uint32_t>;
using Map = std::vector<int32_t>;

constexpr uint32_t kAlphabet = 16;

// Greedy alignment of all of `a` against all of `b` from b[b_start].
int64_t Greedy(const Seq& a, const Seq& b, Map* a_to_b, int64_t b_start = 0) {
  const SymbolPositions a_index(a, kAlphabet);
  const SymbolPositions b_index(b, kAlphabet);
  return AlignFrom(a, a_index, b, b_index, b_start, AlignOptions(),
                   /*give_up_below=*/0, a_to_b);
}

TEST(SymbolPositionsTest, ListsEachSymbolsPositionsInOrder) {
  const Seq s = {3, 1, 3, kNoName, 3, 20};  // 20 is outside the alphabet
  const SymbolPositions index(s, kAlphabet);
  EXPECT_EQ(Map(index.Positions(3).begin(), index.Positions(3).end()),
            (Map{0, 2, 4}));
  EXPECT_EQ(index.NextAtOrAfter(3, 1), 2);
  EXPECT_EQ(index.NextAtOrAfter(3, 2), 2);
  EXPECT_EQ(index.NextAtOrAfter(3, 5), -1);
  EXPECT_EQ(index.NextAtOrAfter(1, 0), 1);
  EXPECT_EQ(index.NextAtOrAfter(2, 0), -1);  // in the alphabet, never seen
  // Names outside the alphabet (kNoName included) are not indexed.
  EXPECT_TRUE(index.Positions(20).empty());
  EXPECT_TRUE(index.Positions(kNoName).empty());
  EXPECT_EQ(index.NextAtOrAfter(kNoName, 0), -1);
}

TEST(SequenceAlignerTest, IdenticalSequencesMatchOneToOne) {
  Map a_to_b;
  EXPECT_EQ(Greedy({1, 2, 2, 3}, {1, 2, 2, 3}, &a_to_b), 4);
  EXPECT_EQ(a_to_b, (Map{0, 1, 2, 3}));
}

TEST(SequenceAlignerTest, SkipsAGapOfKinetoOnlyOps) {
  // Kineto recorded three ops (9) the ET lacks between 2 and 3.
  Map a_to_b;
  EXPECT_EQ(Greedy({1, 2, 3, 4, 5, 6}, {1, 2, 9, 9, 9, 3, 4, 5, 6}, &a_to_b),
            6);
  EXPECT_EQ(a_to_b, (Map{0, 1, 5, 6, 7, 8}));
}

TEST(SequenceAlignerTest, SkipsEtOnlyOpsAndUnrecordedNames) {
  // 7 is in the ET only; kNoName (a name Kineto never has) matches nothing.
  Map a_to_b;
  EXPECT_EQ(Greedy({1, 2, 7, 3, 4, kNoName, 5}, {1, 2, 3, 4, 5}, &a_to_b), 5);
  EXPECT_EQ(a_to_b, (Map{0, 1, -1, 2, 3, -1, 4}));
}

TEST(SequenceAlignerTest, StartsWhereTheCallerSays) {
  // B holds two iterations; aligning from the second maps into it.
  Map a_to_b;
  EXPECT_EQ(Greedy({1, 2, 3}, {1, 2, 3, 1, 2, 3}, &a_to_b, /*b_start=*/3), 3);
  EXPECT_EQ(a_to_b, (Map{3, 4, 5}));
}

TEST(SequenceAlignerTest, GivesUpOnceTheBarCannotBeReached) {
  const Seq a = {1, 2, 3, 4};
  const Seq b = {5, 6, 7, 8};
  const SymbolPositions a_index(a, kAlphabet);
  const SymbolPositions b_index(b, kAlphabet);
  Map a_to_b;
  // Nothing matches: the first mismatch already rules out 3 matches.
  EXPECT_EQ(AlignFrom(a, a_index, b, b_index, 0, AlignOptions(),
                      /*give_up_below=*/3, &a_to_b),
            0);
  EXPECT_EQ(a_to_b, (Map{-1, -1, -1, -1}));
}

// Three blocks x 5 6 y; in B's first block the equal-start siblings 5 and 6
// (aten::lift_fresh, aten::detach_ starting in the same microsecond) come out
// in the other order.
const Seq kBlocks = {1, 5, 6, 2, 1, 5, 6, 2, 1, 5, 6, 2};
const Seq kSwappedFirst = {1, 6, 5, 2, 1, 5, 6, 2, 1, 5, 6, 2};

TEST(SequenceAlignerTest, GreedyResyncsAtTheWrongRepeatAfterASwap) {
  // The greedy aligner resynchronises at the next 5 whose follower agrees,
  // which is in block 2: A's block 1 takes block 2's times, A's block 2 takes
  // block 3's, and A's block 3 is left unmatched. This is why the matcher
  // falls back to the global alignment.
  Map a_to_b;
  EXPECT_EQ(Greedy(kBlocks, kSwappedFirst, &a_to_b), 8);
  EXPECT_EQ(a_to_b, (Map{0, 5, 6, 7, 8, 9, 10, 11, -1, -1, -1, -1}));
}

TEST(GlobalAlignerTest, EqualStartSwapLosesOneSiblingAndNoBlock) {
  Map a_to_b;
  // One of the swapped pair must go unmatched (2 one-sided ops: one in A, one
  // in B); every other op keeps its own block.
  EXPECT_EQ(AlignGlobal(kBlocks, kSwappedFirst, 0, 12, 16, &a_to_b), 11);
  EXPECT_EQ(a_to_b[0], 0);
  EXPECT_EQ(a_to_b[3], 3);
  for (int i = 4; i < 12; ++i) EXPECT_EQ(a_to_b[i], i) << i;
  // Of A's 5 (position 1) and 6 (position 2), exactly one is matched, to
  // B's op of the same name.
  EXPECT_NE(a_to_b[1] == 2, a_to_b[2] == 1);
  EXPECT_TRUE(a_to_b[1] == 2 || a_to_b[1] == -1);
  EXPECT_TRUE(a_to_b[2] == 1 || a_to_b[2] == -1);
}

TEST(GlobalAlignerTest, AlignsAgainstAWindowWithAFreeEnd) {
  // B's window [2, 9): one Kineto-only op (9) inside; the next iteration,
  // after A's end, is free (not counted against the edit budget).
  const Seq a = {1, 2, 3};
  const Seq b = {7, 7, 1, 9, 2, 3, 1, 2, 3, 7};
  Map a_to_b;
  EXPECT_EQ(AlignGlobal(a, b, 2, 9, /*max_edits=*/1, &a_to_b), 3);
  EXPECT_EQ(a_to_b, (Map{2, 4, 5}));
}

TEST(GlobalAlignerTest, SkipsAGapWithinItsEditBudget) {
  // Two Kineto-only ops (9) between 1 and 2: two one-sided ops.
  const Seq a = {1, 2, 3, 4, 5, 6};
  const Seq b = {1, 9, 9, 2, 3, 4, 5, 6};
  Map a_to_b = {7};
  // Over budget: no answer rather than a wrong one, output untouched.
  EXPECT_EQ(AlignGlobal(a, b, 0, 8, /*max_edits=*/1, &a_to_b), -1);
  EXPECT_EQ(a_to_b, (Map{7}));
  EXPECT_EQ(AlignGlobal(a, b, 0, 8, /*max_edits=*/2, &a_to_b), 6);
  EXPECT_EQ(a_to_b, (Map{0, 3, 4, 5, 6, 7}));
}

TEST(GlobalAlignerTest, FewestOneSidedOpsCanDropATailRatherThanSkipAGap) {
  // Skipping three Kineto-only ops costs 3, leaving A's last two ops
  // unmatched costs 2: the global alignment matches only the first op. The
  // matcher keeps the greedy answer when it matched more (host_op_matcher.cc).
  const Seq a = {1, 2, 3};
  const Seq b = {1, 9, 9, 9, 2, 3};
  Map a_to_b;
  EXPECT_EQ(AlignGlobal(a, b, 0, 6, /*max_edits=*/16, &a_to_b), 1);
  EXPECT_EQ(a_to_b, (Map{0, -1, -1}));
  EXPECT_EQ(Greedy(a, b, &a_to_b), 3);
  EXPECT_EQ(a_to_b, (Map{0, 4, 5}));
}

TEST(CandidateStartsTest, EveryOccurrenceOfTheOpeningNames) {
  const Seq a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  // Two iterations in B, after a prefix of other ops; a partial copy of the
  // opening (1 2 3 then 0) does not anchor.
  const Seq b = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,
                 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const SymbolPositions b_index(b, kAlphabet);
  EXPECT_EQ(CandidateStarts(a, b, b_index, 8), (std::vector<int64_t>{2, 16}));
}

TEST(CandidateStartsTest, SamplesEvenlyBeyondTheLimit) {
  const Seq a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Seq b;  // four iterations, at 0, 10, 20 and 30
  for (int it = 0; it < 4; ++it) {
    b.insert(b.end(), a.begin(), a.end());
    b.push_back(0);
  }
  const SymbolPositions b_index(b, kAlphabet);
  EXPECT_EQ(CandidateStarts(a, b, b_index, 8),
            (std::vector<int64_t>{0, 10, 20, 30}));
  EXPECT_EQ(CandidateStarts(a, b, b_index, 2), (std::vector<int64_t>{0, 20}));
}

TEST(CandidateStartsTest, AnchorsPastNamesKinetoLacksOrFallsBackToZero) {
  // A's opening holds a name Kineto never has: the anchor moves past it and
  // the start leaves room for the ops before it.
  const Seq a = {kNoName, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Seq b = {0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const SymbolPositions b_index(b, kAlphabet);
  EXPECT_EQ(CandidateStarts(a, b, b_index, 8), (std::vector<int64_t>{2}));
  // Nothing in common: start at 0.
  const Seq other = {10, 11, 12, 13, 14, 15, 10, 11, 12};
  const SymbolPositions other_index(other, kAlphabet);
  EXPECT_EQ(CandidateStarts(a, other, other_index, 8),
            (std::vector<int64_t>{0}));
}

}  // namespace
}  // namespace et::kineto
