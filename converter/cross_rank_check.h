// After a multi-rank conversion: checks that, for each process group, every
// member rank issued the same collectives in the same order with the same type
// and size. A mismatch is the usual reason a simulation or replay of the job
// would deadlock or lie.
#ifndef CONVERTER_CROSS_RANK_CHECK_H_
#define CONVERTER_CROSS_RANK_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace et::convert {

struct RankTrace {
  int rank = 0;
  std::string et_path;  // a converted .et
};

// One line per mismatch (rank, node id, type and sizes); empty when all agree.
// Groups with explicit member ranks are checked among those ranks; others among
// all ranks given.
absl::StatusOr<std::vector<std::string>> CheckCollectivesAcrossRanks(
    const std::vector<RankTrace>& ranks, size_t max_reports = 20);

}  // namespace et::convert

#endif  // CONVERTER_CROSS_RANK_CHECK_H_
