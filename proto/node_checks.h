// Field checks every reader of .et files applies to each node as it is read:
// values that the schema cannot mean (a node type or comm_type outside the
// enum, a negative comm_size, a peer rank outside any job) are errors naming
// the node and the field, instead of being carried into a simulation or
// replay as garbage (a "-1-byte collective"). Structural problems that real
// traces do have (dependencies on missing ids, ctrl-dep cycles in 2023-era
// files) are not checked here: tools report and work around those.
// Stateless; thread-safe.
#ifndef PROTO_NODE_CHECKS_H_
#define PROTO_NODE_CHECKS_H_

#include "absl/status/status.h"
#include "proto/et_def.pb.h"

namespace et {

// OK, or InvalidArgument "node <id>: <field> ..." (no file name: the caller
// knows it).
absl::Status CheckNodeFields(const ChakraProtoMsg::Node& node);

}  // namespace et

#endif  // PROTO_NODE_CHECKS_H_
