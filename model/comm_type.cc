// Collective name parsing; see comm_type.h.
#include "model/comm_type.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace et {
namespace {

using ChakraProtoMsg::CollectiveCommType;

// Lower-case with '_', '-', ' ' and ':' removed: "all_reduce" == "ALLREDUCE".
std::string Canonical(absl::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '_' || c == '-' || c == ' ' || c == ':') continue;
    out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

struct Entry {
  const char* canonical;
  CommKind kind;
  CollectiveCommType type;
};

// Longer spellings first where one is a prefix of another (reducescatter before
// reduce).
constexpr Entry kEntries[] = {
    {"allreduce", CommKind::kCollective, ChakraProtoMsg::ALL_REDUCE},
    {"reducescatterblock", CommKind::kCollective,
     ChakraProtoMsg::REDUCE_SCATTER_BLOCK},
    {"reducescatter", CommKind::kCollective, ChakraProtoMsg::REDUCE_SCATTER},
    {"allgather", CommKind::kCollective, ChakraProtoMsg::ALL_GATHER},
    {"alltoall", CommKind::kCollective, ChakraProtoMsg::ALL_TO_ALL},
    {"broadcast", CommKind::kCollective, ChakraProtoMsg::BROADCAST},
    {"bcast", CommKind::kCollective, ChakraProtoMsg::BROADCAST},
    {"reduce", CommKind::kCollective, ChakraProtoMsg::REDUCE},
    {"gather", CommKind::kCollective, ChakraProtoMsg::GATHER},
    {"scatter", CommKind::kCollective, ChakraProtoMsg::SCATTER},
    {"barrier", CommKind::kCollective, ChakraProtoMsg::BARRIER},
    {"send", CommKind::kSend, ChakraProtoMsg::ALL_REDUCE},
    {"recv", CommKind::kRecv, ChakraProtoMsg::ALL_REDUCE},
    {"wait", CommKind::kWait, ChakraProtoMsg::ALL_REDUCE},
};

}  // namespace

std::optional<CommSpelling> ParseCommName(absl::string_view name) {
  // Chakra's 2023 converter numbered host-side calls: "c10d::allreduce_(0)".
  if (absl::EndsWith(name, ")")) {
    const size_t open = name.rfind('(');
    if (open != absl::string_view::npos && open + 2 < name.size() &&
        std::all_of(name.begin() + open + 1, name.end() - 1,
                    [](char ch) { return ch >= '0' && ch <= '9'; })) {
      name = name.substr(0, open);
    }
  }
  std::string c = Canonical(name);
  // Strip the namespaces and decorations PyTorch adds: c10d::allreduce_,
  // nccl:all_reduce, gloo:broadcast, _allgather_base,
  // allgather_into_tensor_coalesced, alltoall_base.
  for (const char* prefix : {"c10d", "nccl", "gloo", "mpi", "ucc"}) {
    if (absl::StartsWith(c, prefix)) {
      c.erase(0, std::char_traits<char>::length(prefix));
      break;
    }
  }
  for (const char* suffix :
       {"coalesced", "intotensor", "tensor", "base", "multigpu"}) {
    if (absl::EndsWith(c, suffix) &&
        c.size() > std::char_traits<char>::length(suffix)) {
      c.erase(c.size() - std::char_traits<char>::length(suffix));
    }
  }
  for (const Entry& e : kEntries) {
    if (c == e.canonical) return CommSpelling{e.kind, e.type};
  }
  if (c == "allgatherv")
    return CommSpelling{CommKind::kCollective, ChakraProtoMsg::ALL_GATHER};
  if (c == "alltoallv") {
    return CommSpelling{CommKind::kCollective, ChakraProtoMsg::ALL_TO_ALL};
  }
  if (c == "isend")
    return CommSpelling{CommKind::kSend, ChakraProtoMsg::ALL_REDUCE};
  if (c == "irecv" || c == "recvanysource") {
    return CommSpelling{CommKind::kRecv, ChakraProtoMsg::ALL_REDUCE};
  }
  if (c == "init" || c == "split" || c == "monitoredbarrier") {
    return CommSpelling{CommKind::kOther, ChakraProtoMsg::ALL_REDUCE};
  }
  return std::nullopt;
}

absl::string_view CommTypeName(CollectiveCommType type) {
  return ChakraProtoMsg::CollectiveCommType_Name(type);
}

double BusBandwidthFactor(CollectiveCommType type, int ranks) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return 2.0 * (n - 1) / n;
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
    case ChakraProtoMsg::ALL_TO_ALL:
    case ChakraProtoMsg::GATHER:
    case ChakraProtoMsg::SCATTER:
      return (n - 1) / n;
    case ChakraProtoMsg::BROADCAST:
    case ChakraProtoMsg::REDUCE:
      return 1.0;
    default:
      return 0.0;
  }
}

}  // namespace et
