// A process group as recorded in a trace (`## process_group:init ##`), and its
// encoding in Chakra attributes: parallel lists
// pg_names/pg_descs/pg_backends/pg_sizes plus one `pg_ranks:<name>` int64 list
// per group (empty = all ranks), on the global metadata and on the METADATA
// node. Typed lists, not a JSON string, so consumers need no parser.
#ifndef MODEL_PROCESS_GROUP_H_
#define MODEL_PROCESS_GROUP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/attributes.h"

namespace et {

// How every tool names the group of all ranks (collectives without a
// pg_name): et-sim's collectives table and deadlock messages, et-viz's report
// and tracks.
inline constexpr char kAllRanksGroupName[] = "<all>";

struct ProcessGroup {
  std::string name;     // "0", "1", ...: what collectives' pg_name refers to
  std::string desc;     // "default_pg", "undefined", ...
  std::string backend;  // "cuda:nccl", "cpu:gloo", ...
  std::vector<int64_t> ranks;  // global ranks; empty means every rank
  int64_t size = 0;            // group_size as recorded (0 if unknown)
  int64_t backend_id = 0;      // 1.0.2 traces name groups by this id

  // Number of members: ranks.size(), else size, else `world_size`.
  int64_t MemberCount(int64_t world_size) const;
};

// Parses the JSON string of a `## process_group:init ##` node's first input.
absl::StatusOr<std::vector<ProcessGroup>> ParseProcessGroupJson(
    absl::string_view json);

void EncodeProcessGroups(const std::vector<ProcessGroup>& groups,
                         AttrList* attrs);
std::vector<ProcessGroup> DecodeProcessGroups(const AttrList& attrs);

}  // namespace et

#endif  // MODEL_PROCESS_GROUP_H_
