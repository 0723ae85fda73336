// For the tests of real tensor-parallel x data-parallel recordings
// (tp_dp_test.cc, torch2_tp_dp_test.cc): the members of the group each
// collective of a converted .et runs on, read back from the file, and the
// recorded ranks simulated in et-sim's schedule and in ASTRA-sim's.
#ifndef TESTS_SIMULATOR_COLLECTIVE_GROUPS_H_
#define TESTS_SIMULATOR_COLLECTIVE_GROUPS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "simulator/simulation.h"

namespace et::testing {

// Consecutive or strided ranks: first, first + stride, ... (count of them).
inline std::vector<int64_t> Strided(int64_t first, int64_t count,
                                    int64_t stride) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

// The members of the group each collective of `path` names ({-1}: none, the
// whole world), keyed by comm_size; checks that each group's collectives
// depend on the previous one (one issue order per group).
inline std::map<uint64_t, std::vector<std::vector<int64_t>>> GroupsBySize(
    const std::string& path) {
  auto graph = LoadGraph(path);
  EXPECT_TRUE(graph.ok()) << graph.status();
  std::map<uint64_t, std::vector<std::vector<int64_t>>> out;
  if (!graph.ok()) return out;
  const std::vector<ProcessGroup> groups =
      DecodeProcessGroups(graph->metadata().attr());
  std::map<std::string, uint64_t> last_in_group;
  for (const auto& node : graph->nodes()) {
    if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    const std::string pg = GetString(node, attr::kPgName).value_or("");
    std::vector<int64_t> ranks = {-1};
    for (const ProcessGroup& g : groups) {
      if (g.name == pg) ranks = g.ranks;
    }
    out[static_cast<uint64_t>(GetInt(node, attr::kCommSize).value_or(0))]
        .push_back(ranks);
    auto it = last_in_group.find(pg);
    if (it != last_in_group.end()) {
      bool chained = false;
      for (uint64_t d : node.ctrl_deps()) chained = chained || d == it->second;
      EXPECT_TRUE(chained) << "node " << node.id() << " of group " << pg
                           << " does not follow node " << it->second;
    }
    last_in_group[pg] = node.id();
  }
  return out;
}

// The ranks of `pattern` (a %d path) simulated in et-sim's default schedule,
// then in ASTRA-sim's (one collective at a time per rank, the lowest ready id
// first); a failed run fails the test and is left out.
inline std::vector<std::unique_ptr<sim::Simulation>> SimulateInBothSchedules(
    const std::string& pattern, int ranks) {
  std::vector<std::unique_ptr<sim::Simulation>> out;
  for (auto schedule :
       {sim::SchedulingMode::kStreamAware, sim::SchedulingMode::kAstraCompat}) {
    sim::SimOptions options;
    options.scheduling = schedule;
    auto run = sim::Simulation::Run({pattern, ranks}, options);
    EXPECT_TRUE(run.ok()) << pattern << ": " << run.status();
    if (run.ok()) out.push_back(std::move(*run));
  }
  return out;
}

}  // namespace et::testing

#endif  // TESTS_SIMULATOR_COLLECTIVE_GROUPS_H_
