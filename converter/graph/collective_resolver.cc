// Collective resolution; see collective_resolver.h.
#include "converter/graph/collective_resolver.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "model/io_shapes.h"
#include "nlohmann/json.hpp"

namespace et::convert {
namespace {

using nlohmann::json;

// Namespaces of communication ops; `call` ones are what user code calls, `work`
// ones are the backend's record of the same collective.
struct CommNamespace {
  const char* prefix;
  bool work_record;
};
constexpr CommNamespace kNamespaces[] = {
    {"c10d::", false},
    {"_c10d_functional::", false},
    {"c10d_functional::", false},
    {"nccl:", true},
    {"gloo:", true},
    {"mpi:", true},
    {"ucc:", true},
};

struct Classified {
  CommSpelling spelling;
  bool work_record = false;
  bool param_comms = false;
};

// The parsed positional arguments of one communication op.
struct CommArgs {
  json values = json::array();
  json types = json::array();
};

const ExtraAttr* FindExtra(const HostOp& op, const StringPool& pool,
                           absl::string_view n) {
  for (const auto& a : op.extra_attrs) {
    if (pool.Get(a.name) == n) return &a;
  }
  return nullptr;
}

json ParseList(absl::string_view text) {
  json v = json::parse(text.begin(), text.end(), nullptr,
                       /*allow_exceptions=*/false);
  return v.is_array() ? v : json::array();
}

bool IsCommName(absl::string_view name) {
  if (name == "record_param_comms") return true;
  for (const CommNamespace& ns : kNamespaces) {
    if (absl::StartsWith(name, ns.prefix)) return true;
  }
  return false;
}

std::optional<Classified> Classify(const HostOp& op, const StringPool& pool,
                                   const CommArgs& args) {
  absl::string_view name = pool.Get(op.name);
  if (name == "record_param_comms") {
    std::optional<CommSpelling> s;
    if (const ExtraAttr* a = FindExtra(op, pool, "collective_name"))
      s = ParseCommName(a->s);
    if (!s.has_value()) {
      for (const auto& v : args.values) {
        if (v.is_string() &&
            (s = ParseCommName(v.get<std::string>())).has_value())
          break;
      }
    }
    if (!s.has_value())
      s = CommSpelling{CommKind::kOther, ChakraProtoMsg::ALL_REDUCE};
    return Classified{*s, false, true};
  }
  for (const CommNamespace& ns : kNamespaces) {
    if (!absl::StartsWith(name, ns.prefix)) continue;
    std::optional<CommSpelling> s =
        ParseCommName(name.substr(strlen(ns.prefix)));
    if (!s.has_value())
      s = CommSpelling{CommKind::kOther, ChakraProtoMsg::ALL_REDUCE};
    return Classified{*s, ns.work_record, false};
  }
  return std::nullopt;
}

// Which argument of a c10d call holds the input buffer.
int InputArg(const std::string& name, ChakraProtoMsg::CollectiveCommType type) {
  if (!absl::StartsWith(name, "c10d::"))
    return 0;  // functional ops and work records
  switch (type) {
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
    case ChakraProtoMsg::ALL_TO_ALL:
      return 1;
    default:
      return 0;
  }
}

int64_t ArgBytes(absl::Span<const TensorRef> inputs, int arg) {
  int64_t bytes = 0;
  bool found = false;
  for (const TensorRef& t : inputs) {
    if (t.arg == arg) {
      bytes += t.bytes();
      found = true;
    }
  }
  if (found) return bytes;
  for (const TensorRef& t : inputs) bytes += t.bytes();
  return inputs.empty() ? -1 : bytes;
}

// The dtype of the tensors in input argument `arg`, from the types list.
std::string ArgDtype(const json& types, int arg) {
  if (!types.is_array() || static_cast<int>(types.size()) <= arg ||
      !types[arg].is_string()) {
    return "";
  }
  std::string t = types[arg].get<std::string>();
  size_t pos = t.find("Tensor(");
  if (pos == std::string::npos) return "";
  size_t end = t.find(')', pos);
  auto info = DtypeFromName(
      t.substr(pos, end == std::string::npos ? end : end - pos + 1));
  return info.has_value() ? std::string(info->name) : "";
}

// Fills what this one record says about its collective into `rec` (fields not
// yet set).
void Describe(const HostOp& op, absl::Span<const TensorRef> inputs,
              const StringPool& pool, const Classified& c, const CommArgs& args,
              const std::vector<ProcessGroup>& groups, CommRecord* rec) {
  const std::string name(pool.Get(op.name));
  const json& values = args.values;
  auto int_at = [&](size_t i) -> int64_t {
    return i < values.size() && values[i].is_number_integer()
               ? values[i].get<int64_t>()
               : -1;
  };
  if (c.param_comms) {
    const ExtraAttr* nelems = FindExtra(op, pool, "in_msg_nelems");
    const ExtraAttr* dtype = FindExtra(op, pool, "dtype");
    std::optional<DtypeInfo> info;
    if (dtype != nullptr) info = DtypeFromName(dtype->s);
    if (rec->size_bytes < 0 && nelems != nullptr && info.has_value() &&
        c.spelling.kind != CommKind::kWait) {
      rec->size_bytes = nelems->i * info->elem_bytes;
    }
    if (rec->dtype.empty() && info.has_value() &&
        c.spelling.kind != CommKind::kWait) {
      rec->dtype = std::string(info->name);
    }
    if (const ExtraAttr* pg = FindExtra(op, pool, "pg_name");
        pg && rec->pg_name.empty()) {
      rec->pg_name = pg->s;
    }
    // Positional layout: [tensors, seq, pg, ...] for collectives, [seq, pg,
    // ...] for waits.
    const bool has_tensors = !values.empty() && values[0].is_array();
    if (rec->seq < 0) rec->seq = has_tensors ? int_at(1) : int_at(0);
    const size_t pg_pos = has_tensors ? 2 : 1;
    if (rec->pg_name.empty() && pg_pos < values.size()) {
      const json& pg = values[pg_pos];
      if (pg.is_array() && !pg.empty() && pg[0].is_string()) {
        rec->pg_name = pg[0].get<std::string>();
      } else if (pg.is_string()) {
        rec->pg_name = pg.get<std::string>();
      } else if (pg.is_number_integer()) {
        for (const ProcessGroup& g : groups) {
          if (g.backend_id != 0 && g.backend_id == pg.get<int64_t>())
            rec->pg_name = g.name;
        }
      }
    }
  }
  if (c.spelling.kind == CommKind::kWait) return;
  const int arg = InputArg(name, c.spelling.type);
  if (rec->size_bytes < 0) rec->size_bytes = ArgBytes(inputs, arg);
  if (rec->dtype.empty())
    rec->dtype = ArgDtype(args.types, c.param_comms ? 0 : arg);
  if (absl::StartsWith(name, "c10d::")) {
    if (c.spelling.kind == CommKind::kSend ||
        c.spelling.kind == CommKind::kRecv) {
      if (rec->peer < 0) rec->peer = int_at(2);
      if (rec->tag < 0) rec->tag = int_at(3);
    } else if (c.spelling.type == ChakraProtoMsg::BROADCAST ||
               c.spelling.type == ChakraProtoMsg::REDUCE ||
               c.spelling.type == ChakraProtoMsg::GATHER ||
               c.spelling.type == ChakraProtoMsg::SCATTER) {
      const size_t root_pos = c.spelling.type == ChakraProtoMsg::REDUCE ? 3 : 2;
      if (rec->root < 0) rec->root = int_at(root_pos);
    }
  }
}

bool SharesTensor(absl::Span<const TensorRef> a,
                  absl::Span<const TensorRef> b) {
  for (const TensorRef& x : a) {
    for (const TensorRef& y : b) {
      if (x.tensor_id == y.tensor_id || x.storage_id == y.storage_id)
        return true;
    }
  }
  return false;
}

// Whether a CPU backend runs the collective: one of its records is gloo's, or
// it names tensors and none of them is on a GPU.
bool RunsOnHost(const OpTable& table, const CommRecord& rec) {
  bool any_tensor = false;
  bool any_gpu = false;
  auto visit = [&](uint32_t op) {
    if (absl::StartsWith(table.name(op), "gloo:")) return true;
    for (const TensorRef& t : table.inputs(op)) {
      any_tensor = true;
      any_gpu = any_gpu || t.on_gpu;
    }
    return false;
  };
  if (visit(rec.owner)) return true;
  for (uint32_t m : rec.members) {
    if (visit(m)) return true;
  }
  return any_tensor && !any_gpu;
}

// The group named by the nearest `## pg_name:<name> ##` annotation enclosing
// `op` (examples/README.md: PyTorch 1.13 records no group per collective, so
// the recorder wraps each call in one); "" when none encloses it.
std::string MarkedGroup(const OpTable& table, uint32_t op) {
  constexpr absl::string_view kPrefix = "## pg_name:";
  constexpr absl::string_view kSuffix = " ##";
  for (uint32_t a = table.parent(op); a != kNoOp; a = table.parent(a)) {
    absl::string_view name = table.name(a);
    if (absl::StartsWith(name, kPrefix) && absl::EndsWith(name, kSuffix) &&
        name.size() > kPrefix.size() + kSuffix.size()) {
      name.remove_prefix(kPrefix.size());
      name.remove_suffix(kSuffix.size());
      return std::string(name);
    }
  }
  return "";
}

}  // namespace

bool IsWorkRecordName(absl::string_view name) {
  for (const CommNamespace& ns : kNamespaces) {
    if (ns.work_record && absl::StartsWith(name, ns.prefix)) return true;
  }
  return false;
}

bool IsNcclKernelName(absl::string_view name) {
  return absl::StartsWith(name, "ncclKernel") ||
         absl::StartsWith(name, "ncclDevKernel");
}

std::optional<CommSpelling> ParseNcclKernelName(absl::string_view name) {
  if (!IsNcclKernelName(name)) return std::nullopt;
  size_t start = name.find('_');
  if (start == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = name.substr(start + 1);
  // ncclDevKernel_AllReduce_Sum_f32_RING_LL(...), ncclDevKernel_SendRecv(...)
  absl::string_view op = rest.substr(0, rest.find_first_of("_("));
  if (op == "SendRecv")
    return CommSpelling{CommKind::kSend, ChakraProtoMsg::ALL_REDUCE};
  return ParseCommName(op);
}

absl::Status CollectiveResolver::Resolve(
    const OpTable& table, const std::vector<ProcessGroup>& groups,
    TraceTextSource* text) {
  const uint32_t n = static_cast<uint32_t>(table.size());
  records_.clear();
  record_of_.assign(n, -1);
  marked_groups_ = 0;
  std::vector<std::optional<Classified>> cls(n);
  absl::flat_hash_map<uint32_t, CommArgs> args;  // communication ops only: few
  for (uint32_t i = 0; i < n; ++i) {
    if (!IsCommName(table.name(i))) continue;
    const HostOp& op = table.op(i);
    auto node_text = text->NodeText(op);
    if (!node_text.ok()) return node_text.status();
    CommArgs& a = args[i];
    a.values = ParseList(op.io(*node_text, kInValues));
    a.types = ParseList(op.io(*node_text, kInTypes));
    cls[i] = Classify(op, table.pool(), a);
  }
  // Owners: the outermost op of each nested chain of communication ops
  // (pre-order visits parents first, so a parent's record exists when its child
  // is seen).
  for (uint32_t i : table.preorder()) {
    if (!cls[i].has_value()) continue;
    const uint32_t p = table.parent(i);
    if (p != kNoOp && record_of_[p] >= 0) {
      record_of_[i] = record_of_[p];
      records_[record_of_[i]].members.push_back(i);
      continue;
    }
    record_of_[i] = static_cast<int32_t>(records_.size());
    CommRecord rec;
    rec.owner = i;
    records_.push_back(std::move(rec));
  }
  // Work records standing alone: fold into the latest earlier call of the same
  // kind and type that shares a tensor and has no work record yet; then the
  // ones still alone into the earliest later such call. The observer can
  // hang a work record under an op that started before its call (a DDP
  // bucket's gloo:all_reduce under an earlier ReluBackward0), and a work
  // record left alone would be a second collective on this rank only: the
  // ranks' collectives would no longer pair.
  std::vector<bool> has_work(records_.size(), false);
  for (const CommRecord& r : records_) {
    for (uint32_t m : r.members) {
      if (cls[m]->work_record) has_work[record_of_[r.owner]] = true;
    }
  }
  std::vector<bool> dissolved(records_.size(), false);
  auto fold_into = [&](size_t r, size_t c) {
    const uint32_t w = records_[r].owner;
    const uint32_t call = records_[c].owner;
    if (dissolved[c] || has_work[c] || cls[call]->work_record) return false;
    if (cls[call]->spelling.kind != cls[w]->spelling.kind ||
        cls[call]->spelling.type != cls[w]->spelling.type ||
        !SharesTensor(table.inputs(call), table.inputs(w))) {
      return false;
    }
    has_work[c] = true;
    dissolved[r] = true;
    records_[c].members.push_back(w);
    for (uint32_t m : records_[r].members) records_[c].members.push_back(m);
    return true;
  };
  for (size_t r = 0; r < records_.size(); ++r) {
    if (!cls[records_[r].owner]->work_record) continue;
    for (size_t c = r; c-- > 0;) {
      if (fold_into(r, c)) break;
    }
  }
  for (size_t r = 0; r < records_.size(); ++r) {
    if (dissolved[r] || !cls[records_[r].owner]->work_record) continue;
    for (size_t c = r + 1; c < records_.size(); ++c) {
      if (fold_into(r, c)) break;
    }
  }
  // Compact, then describe each collective from its owner first, then its
  // members.
  std::vector<CommRecord> kept;
  for (size_t r = 0; r < records_.size(); ++r) {
    if (!dissolved[r]) kept.push_back(std::move(records_[r]));
  }
  records_ = std::move(kept);
  for (size_t r = 0; r < records_.size(); ++r) {
    CommRecord& rec = records_[r];
    std::sort(rec.members.begin(), rec.members.end());
    record_of_[rec.owner] = static_cast<int32_t>(r);
    for (uint32_t m : rec.members) record_of_[m] = static_cast<int32_t>(r);
    // The most specific spelling wins: a record_param_comms name over a c10d
    // one.
    const Classified* best = &*cls[rec.owner];
    for (uint32_t m : rec.members) {
      if (best->spelling.kind == CommKind::kOther) best = &*cls[m];
    }
    rec.kind = best->spelling.kind;
    rec.type = best->spelling.type;
    Describe(table.op(rec.owner), table.inputs(rec.owner), table.pool(),
             *cls[rec.owner], args[rec.owner], groups, &rec);
    for (uint32_t m : rec.members) {
      Describe(table.op(m), table.inputs(m), table.pool(), *cls[m], args[m],
               groups, &rec);
    }
    rec.on_host = RunsOnHost(table, rec);
    // PyTorch's own pg_name wins; else the annotation around the call (or
    // around a work record that hangs elsewhere).
    if (rec.pg_name.empty() && rec.kind != CommKind::kWait) {
      rec.pg_name = MarkedGroup(table, rec.owner);
      for (size_t m = 0; m < rec.members.size() && rec.pg_name.empty(); ++m)
        rec.pg_name = MarkedGroup(table, rec.members[m]);
      if (!rec.pg_name.empty()) ++marked_groups_;
    }
  }
  return absl::OkStatus();
}

}  // namespace et::convert

namespace et::convert {

std::string WorldOnlyGroupsWarning(const std::vector<CommRecord>& records,
                                   const std::vector<ProcessGroup>& groups) {
  int64_t world = 0;
  for (const ProcessGroup& g : groups) {
    world = std::max(world, g.size);
    for (int64_t r : g.ranks) world = std::max(world, r + 1);
  }
  std::vector<std::string> sub_world;  // "1 (2 ranks)"
  absl::flat_hash_map<std::string, int64_t> members;
  for (const ProcessGroup& g : groups) {
    const int64_t count = g.MemberCount(world);
    members[g.name] = count;
    if (count >= 2 && count < world)
      sub_world.push_back(absl::StrFormat("%s (%d ranks)", g.name, count));
  }
  int64_t collectives = 0;
  for (const CommRecord& r : records) {
    if (r.kind != CommKind::kCollective) continue;
    ++collectives;
    auto it = members.find(r.pg_name);
    if (it != members.end() && it->second < world) return "";
  }
  if (sub_world.empty() || collectives == 0) return "";
  return absl::StrFormat(
      "the process-group table has %d group(s) smaller than the world of %d "
      "ranks (%s) but all %d collectives name none of them: each runs on the "
      "whole world in et-sim, et-replay and ASTRA-sim (its cost, its "
      "synchronisation and any --layout scale-out are those of %d ranks, not "
      "of its group); PyTorch records no group per collective over gloo "
      "(1.13 on any backend; 2.11 names groups only in its "
      "process_group:init table): wrap each call in "
      "record_function('## pg_name:<name> ##') (examples/README.md)",
      sub_world.size(), world, absl::StrJoin(sub_world, ", "), collectives,
      world);
}

}  // namespace et::convert
