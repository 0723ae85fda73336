// A process group as a trace's table gives it, for the scaleout tests.
#ifndef TESTS_SCALEOUT_PROCESS_GROUP_FIXTURE_H_
#define TESTS_SCALEOUT_PROCESS_GROUP_FIXTURE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/process_group.h"

namespace et::scaleout {

inline ProcessGroup Group(std::string name, std::string desc,
                          std::vector<int64_t> ranks) {
  ProcessGroup g;
  g.name = std::move(name);
  g.desc = std::move(desc);
  g.size = static_cast<int64_t>(ranks.size());
  g.ranks = std::move(ranks);
  return g;
}

}  // namespace et::scaleout

#endif  // TESTS_SCALEOUT_PROCESS_GROUP_FIXTURE_H_
