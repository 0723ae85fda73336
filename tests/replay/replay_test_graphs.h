// Small graphs for the replay tests, built node by node with the attribute
// names the converter writes (proto/attr_names.h), and a helper that writes one
// to a temp .et file.
#ifndef TESTS_REPLAY_REPLAY_TEST_GRAPHS_H_
#define TESTS_REPLAY_REPLAY_TEST_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_def.pb.h"
#include "proto/et_writer.h"

namespace et::replay::testing {

inline ChakraProtoMsg::Node CompNode(uint64_t id, const std::string& name,
                                     int64_t dur_us, std::vector<uint64_t> deps,
                                     bool host, int64_t queue) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(dur_us);
  for (uint64_t d : deps) n.add_data_deps(d);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, host);
  if (host) {
    SetInt64(n.mutable_attr(), attr::kTid, queue);
  } else {
    SetBool(n.mutable_attr(), attr::kIsGpuOp, true);
    SetInt64(n.mutable_attr(), attr::kStream, queue);
  }
  return n;
}

inline ChakraProtoMsg::Node CollNode(uint64_t id,
                                     ChakraProtoMsg::CollectiveCommType type,
                                     int64_t bytes, std::vector<uint64_t> deps,
                                     const std::string& pg = "") {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name("nccl:coll");
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, false);
  SetInt64(n.mutable_attr(), attr::kCommType, type);
  SetInt64(n.mutable_attr(), attr::kCommSize, bytes);
  if (!pg.empty()) SetString(n.mutable_attr(), attr::kPgName, pg);
  return n;
}

// Metadata with the version every .et carries (an empty one is refused by the
// writer).
inline ChakraProtoMsg::GlobalMetadata Metadata() {
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  return meta;
}

inline std::string TempEtPath(const std::string& name) {
  return std::string(ET_BINARY_DIR) + "/tests/replay/" + name;
}

}  // namespace et::replay::testing

#endif  // TESTS_REPLAY_REPLAY_TEST_GRAPHS_H_
