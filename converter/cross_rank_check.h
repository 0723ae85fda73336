// After a multi-rank conversion: checks that, for each process group, every
// member rank issued the same collectives in the same order with the same type
// and size, and compares the shapes of the ranks' graphs (nodes by type and by
// step). A collective mismatch is the usual reason a simulation or replay of
// the job would deadlock or lie; a shape mismatch between ranks of one SPMD
// program (DDP, FSDP) means a rank's trace was recorded or converted wrong.
#ifndef CONVERTER_CROSS_RANK_CHECK_H_
#define CONVERTER_CROSS_RANK_CHECK_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/graph/graph_digest.h"

namespace et::convert {

struct RankTrace {
  RankTrace() = default;
  RankTrace(int rank_in, std::string et_path_in,
            std::shared_ptr<const GraphDigest> digest_in = nullptr)
      : rank(rank_in),
        et_path(std::move(et_path_in)),
        digest(std::move(digest_in)) {}

  int rank = 0;
  std::string et_path;  // a converted .et
  // What the converter collected while writing it (ConvertReport::digest);
  // null: read from `et_path`.
  std::shared_ptr<const GraphDigest> digest;
};

// One line per mismatch (rank, node id, type and sizes); empty when all agree.
// Groups with explicit member ranks are checked among those ranks; others among
// all ranks given.
absl::StatusOr<std::vector<std::string>> CheckCollectivesAcrossRanks(
    const std::vector<RankTrace>& ranks, size_t max_reports = 20);

struct CrossRankCheck {
  std::vector<std::string> collective_mismatches;  // as above
  // The ranks' common graph shape ("1323 nodes (COMM_COLL_NODE 3, COMP_NODE
  // 1320), by step 441 441 441"), or "" when they differ.
  std::string shape;
  // When they differ: one line, each shape with its ranks; "" otherwise.
  std::string shape_mismatch;
};

// Both checks, on each rank's digest (or one read of its .et).
absl::StatusOr<CrossRankCheck> CheckRanksAgree(
    const std::vector<RankTrace>& ranks, size_t max_reports = 20);

}  // namespace et::convert

#endif  // CONVERTER_CROSS_RANK_CHECK_H_
