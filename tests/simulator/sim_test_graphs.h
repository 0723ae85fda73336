// Small hand-built Chakra graphs for the simulator's tests: compute ops with
// recorded durations, collectives with sizes and groups, on chosen threads and
// streams.
#ifndef TESTS_SIMULATOR_SIM_TEST_GRAPHS_H_
#define TESTS_SIMULATOR_SIM_TEST_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_def.pb.h"

namespace et::sim::testing {

inline ChakraProtoMsg::Node Compute(uint64_t id, int64_t dur_us,
                                    std::vector<uint64_t> deps,
                                    bool gpu = false, int64_t stream = 7) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name("op" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(dur_us);
  for (uint64_t d : deps) n.add_data_deps(d);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, !gpu);
  if (gpu) SetInt64(n.mutable_attr(), attr::kStream, stream);
  return n;
}

inline ChakraProtoMsg::Node Collective(uint64_t id,
                                       ChakraProtoMsg::CollectiveCommType type,
                                       int64_t bytes,
                                       std::vector<uint64_t> deps,
                                       const std::string& pg = "") {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name("coll" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  SetInt64(n.mutable_attr(), attr::kCommType, type);
  SetInt64(n.mutable_attr(), attr::kCommSize, bytes);
  if (!pg.empty()) SetString(n.mutable_attr(), attr::kPgName, pg);
  return n;
}

inline Graph MakeGraph(std::vector<ChakraProtoMsg::Node> nodes) {
  return Graph::Build(ChakraProtoMsg::GlobalMetadata(), std::move(nodes));
}

}  // namespace et::sim::testing

#endif  // TESTS_SIMULATOR_SIM_TEST_GRAPHS_H_
