// The recorded trace's tables; see trace_tables.h.
#include "python/trace_tables.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_join.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "model/comm_type.h"
#include "nlohmann/json.hpp"

namespace et::python {
namespace {

constexpr double kNotRecorded = std::numeric_limits<double>::quiet_NaN();

// ns as us, rounded once: an epoch time in ns (1.7e18) is not a double
// exactly (steps of 256 ns there), its whole us are (below 2^53).
double Microseconds(int64_t ns) {
  return static_cast<double>(ns / 1000) + static_cast<double>(ns % 1000) / 1e3;
}

absl::string_view QueueKindName(QueueKind kind) {
  switch (kind) {
    case QueueKind::kThread:
      return "thread";
    case QueueKind::kStream:
      return "stream";
    case QueueKind::kCommGroup:
      return "group";
  }
  return "?";
}

size_t TotalNodes(const LoadedTrace& trace) {
  size_t n = 0;
  for (const NodeModel& m : trace.models) n += m.size();
  return n;
}

}  // namespace

absl::StatusOr<LoadedTrace> LoadTrace(const std::string& path,
                                      int64_t pattern_ranks) {
  LoadedTrace trace;
  ASSIGN_OR_RETURN(trace.files, ResolveRankPaths(path, pattern_ranks, ".et"));
  ModelOptions options;
  options.keep_io = false;
  for (size_t k = 0; k < trace.files.size(); ++k) {
    ASSIGN_OR_RETURN(NodeModel model, NodeModel::Load(trace.files[k], options));
    const int64_t recorded = model.info().rank;
    trace.ranks.push_back(recorded >= 0 ? recorded : static_cast<int64_t>(k));
    trace.models.push_back(std::move(model));
  }
  return trace;
}

Table NodesTable(const LoadedTrace& trace) {
  const size_t n = TotalNodes(trace);
  Table t;
  auto* id = t.Add<uint64_t>("id");
  Categorical* name = t.AddCategorical("name");
  Categorical* kind = t.AddCategorical("kind");
  Categorical* type = t.AddCategorical("type");
  auto* rank = t.Add<int64_t>("rank");
  auto* on_host = t.Add<bool>("on_host");
  Categorical* queue = t.AddCategorical("queue");
  auto* queue_number = t.Add<int64_t>("queue_number");
  auto* start_us = t.Add<double>("start_us");
  auto* duration_us = t.Add<double>("duration_us");
  auto* inclusive_us = t.Add<double>("inclusive_duration_us");
  auto* launch_us = t.Add<double>("launch_us");
  auto* flops = t.Add<double>("flops");
  auto* bytes = t.Add<double>("bytes");
  auto* step = t.Add<int64_t>("step");
  auto* parent = t.Add<uint64_t>("parent_id");
  Categorical* comm_type = t.AddCategorical("comm_type");
  auto* comm_bytes = t.Add<int64_t>("comm_bytes");
  Categorical* comm_group = t.AddCategorical("comm_group");
  auto* comm_peer = t.Add<int64_t>("comm_peer");
  for (auto* v : {id, parent}) v->reserve(n);
  for (auto* v : {rank, queue_number, step, comm_bytes, comm_peer})
    v->reserve(n);
  for (auto* v : {start_us, duration_us, inclusive_us, flops, bytes})
    v->reserve(n);
  on_host->reserve(n);
  for (Categorical* c : {name, kind, type, queue, comm_type, comm_group})
    c->codes.reserve(n);
  CategoryWriter names(name), kinds(kind), types(type), queues(queue),
      comm_types(comm_type), comm_groups(comm_group);
  for (size_t k = 0; k < trace.models.size(); ++k) {
    const NodeModel& m = trace.models[k];
    for (NodeIndex i = 0; i < m.size(); ++i) {
      id->push_back(m.id(i));
      names.Append(m.name(i));
      kinds.Append(NodeKindName(m.kind(i)));
      types.Append(ChakraProtoMsg::NodeType_Name(m.type(i)));
      rank->push_back(trace.ranks[k]);
      on_host->push_back(m.on_host(i));
      queues.Append(QueueKindName(m.queue(i).kind));
      queue_number->push_back(m.queue(i).number);
      start_us->push_back(m.start_ns(i) < 0 ? kNotRecorded
                                            : Microseconds(m.start_ns(i)));
      duration_us->push_back(m.duration_ns(i) / 1e3);
      inclusive_us->push_back(m.inclusive_duration_ns(i) / 1e3);
      launch_us->push_back(m.launch_ns(i) < 0 ? kNotRecorded
                                              : Microseconds(m.launch_ns(i)));
      flops->push_back(m.flops(i));
      bytes->push_back(m.bytes(i));
      step->push_back(m.step(i));
      parent->push_back(m.parent_id(i));
      const CommSpec* comm = m.comm(i);
      // A send or receive has no collective type: its kind says what it is.
      comm_types.Append(!comm ? absl::string_view()
                        : m.kind(i) == NodeKind::kCollective
                            ? CommTypeName(comm->type)
                            : NodeKindName(m.kind(i)));
      comm_bytes->push_back(comm ? comm->bytes : 0);
      comm_groups.Append(comm ? m.string(comm->pg_name) : "");
      comm_peer->push_back(comm ? comm->peer : -1);
    }
  }
  return t;
}

Table DepsTable(const LoadedTrace& trace) {
  Table t;
  auto* rank = t.Add<int64_t>("rank");
  auto* dst = t.Add<uint64_t>("dst");
  auto* src = t.Add<uint64_t>("src");
  Categorical* kind = t.AddCategorical("kind");
  CategoryWriter kinds(kind);
  for (size_t k = 0; k < trace.models.size(); ++k) {
    const NodeModel& m = trace.models[k];
    for (NodeIndex i = 0; i < m.size(); ++i) {
      for (auto [label, deps] : {std::make_pair("data", m.data_deps(i)),
                                 std::make_pair("ctrl", m.ctrl_deps(i))}) {
        for (NodeIndex d : deps) {
          rank->push_back(trace.ranks[k]);
          dst->push_back(m.id(i));
          src->push_back(m.id(d));
          kinds.Append(label);
        }
      }
    }
  }
  return t;
}

Table GroupsTable(const LoadedTrace& trace) {
  Table t;
  auto* rank = t.Add<int64_t>("rank");
  Categorical* name = t.AddCategorical("name");
  Categorical* desc = t.AddCategorical("desc");
  Categorical* backend = t.AddCategorical("backend");
  Categorical* members = t.AddCategorical("members");
  auto* size = t.Add<int64_t>("size");
  CategoryWriter names(name), descs(desc), backends(backend),
      member_lists(members);
  for (size_t k = 0; k < trace.models.size(); ++k) {
    const NodeModel& m = trace.models[k];
    for (const ProcessGroup& g : m.groups()) {
      rank->push_back(trace.ranks[k]);
      names.Append(g.name);
      descs.Append(g.desc);
      backends.Append(g.backend);
      member_lists.Append(absl::StrJoin(g.ranks, " "));
      size->push_back(g.MemberCount(m.info().world_size));
    }
  }
  return t;
}

std::string MetadataJson(const LoadedTrace& trace) {
  nlohmann::json files = nlohmann::json::array();
  for (size_t k = 0; k < trace.models.size(); ++k) {
    const NodeModel& m = trace.models[k];
    const TraceInfo& info = m.info();
    std::string global;
    google::protobuf::util::JsonPrintOptions print;
    print.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(m.metadata(), &global,
                                                     print)
             .ok())
      global = "{}";
    files.push_back(
        {{"file", trace.files[k]},
         {"rank", trace.ranks[k]},
         {"nodes", m.size()},
         {"schema", info.schema},
         {"recorded_rank", info.rank},
         {"world_size", info.world_size},
         {"measured_world_size", info.measured_world_size},
         {"device_name", info.device_name},
         {"device_compute_capability", info.device_compute_capability},
         {"global_metadata", nlohmann::json::parse(global, nullptr, false)},
         {"notes", m.notes()}});
  }
  return files.dump();
}

}  // namespace et::python
