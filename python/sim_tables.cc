// The simulated run's table; see sim_tables.h.
#include "python/sim_tables.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"
#include "step/memory_timeline.h"
#include "step/storage_lives.h"

namespace et::python {

Table TimelineTable(const sim::Simulation& simulation) {
  Table t;
  auto* rank = t.Add<int64_t>("rank");
  auto* class_ranks = t.Add<int64_t>("class_ranks");
  auto* node = t.Add<uint64_t>("id");
  Categorical* name = t.AddCategorical("name");
  Categorical* category = t.AddCategorical("category");
  Categorical* kind = t.AddCategorical("kind");
  Categorical* resource = t.AddCategorical("resource");
  auto* host = t.Add<bool>("host");
  auto* issue_us = t.Add<double>("issue_us");
  auto* start_us = t.Add<double>("start_us");
  auto* end_us = t.Add<double>("end_us");
  auto* duration_us = t.Add<double>("duration_us");
  auto* wait_us = t.Add<double>("wait_us");
  auto* bytes = t.Add<uint64_t>("bytes");
  CategoryWriter names(name), categories(category), kinds(kind),
      resources(resource);
  const std::vector<sim::RankClass>& classes = simulation.classes();
  const sim::SimResult& result = simulation.result();
  for (size_t c = 0; c < classes.size() && c < result.timelines.size(); ++c) {
    const sim::RankProgram& p = *classes[c].program;
    const sim::ClassTimeline& tl = result.timelines[c];
    for (size_t i = 0; i < p.kind.size(); ++i) {
      if (p.kind[i] == sim::SimOpKind::kNoop || tl.finish_ns[i] < 0) continue;
      const bool comm = p.kind[i] != sim::SimOpKind::kCompute;
      rank->push_back(classes[c].ranks.front());
      class_ranks->push_back(static_cast<int64_t>(classes[c].ranks.size()));
      node->push_back(p.graph->id(i));
      names.Append(p.graph->name(i));
      categories.Append(comm ? "comm" : "compute");
      kinds.Append(NodeKindName(p.graph->kind(static_cast<NodeIndex>(i))));
      resources.Append(p.resource_names[p.resource[i]]);
      host->push_back(p.resource_is_host[p.resource[i]]);
      issue_us->push_back(tl.issue_ns[i] / 1e3);
      start_us->push_back(tl.start_ns[i] / 1e3);
      end_us->push_back(tl.finish_ns[i] / 1e3);
      duration_us->push_back((tl.finish_ns[i] - tl.start_ns[i]) / 1e3);
      wait_us->push_back(comm ? (tl.start_ns[i] - tl.issue_ns[i]) / 1e3 : 0.0);
      bytes->push_back(comm ? p.comm_bytes[i] : 0);
    }
  }
  return t;
}

Table MemoryTimelineTable(const sim::Simulation& simulation) {
  Table t;
  auto* rank = t.Add<int64_t>("rank");
  auto* class_ranks = t.Add<int64_t>("class_ranks");
  Categorical* device = t.AddCategorical("device");
  auto* node = t.Add<uint64_t>("id");
  Categorical* name = t.AddCategorical("name");
  auto* start_us = t.Add<double>("start_us");
  auto* end_us = t.Add<double>("end_us");
  auto* allocated_bytes = t.Add<int64_t>("allocated_bytes");
  std::vector<std::vector<int64_t>*> kind_bytes;
  for (int k = 0; k < kMemoryKinds; ++k) {
    kind_bytes.push_back(t.Add<int64_t>(
        absl::StrCat(MemoryKindName(static_cast<MemoryKind>(k)), "_bytes")));
  }
  CategoryWriter devices(device), names(name);
  const std::vector<sim::RankClass>& classes = simulation.classes();
  const sim::SimResult& result = simulation.result();
  for (size_t c = 0; c < classes.size() && c < result.timelines.size(); ++c) {
    const sim::RankProgram& p = *classes[c].program;
    const sim::MemoryRow* row = simulation.MemoryRowOf(&p);
    const std::vector<StorageLife>* lives = simulation.MemoryLivesOf(&p);
    if (row == nullptr || lives == nullptr) continue;
    const std::string device_name = row->device < 0
                                        ? std::string("host")
                                        : absl::StrCat("cuda:", row->device);
    const sim::ClassTimeline& tl = result.timelines[c];
    const std::vector<MemoryByKind> curve =
        MemoryCurveByKind(*lives, p.graph->size(), row->device);
    for (size_t i = 0; i < curve.size(); ++i) {
      const bool ran = i < p.kind.size() &&
                       p.kind[i] != sim::SimOpKind::kNoop &&
                       tl.finish_ns[i] >= 0;
      rank->push_back(classes[c].ranks.front());
      class_ranks->push_back(static_cast<int64_t>(classes[c].ranks.size()));
      devices.Append(device_name);
      node->push_back(p.graph->id(static_cast<NodeIndex>(i)));
      names.Append(p.graph->name(static_cast<NodeIndex>(i)));
      start_us->push_back(ran ? tl.start_ns[i] / 1e3 : std::nan(""));
      end_us->push_back(ran ? tl.finish_ns[i] / 1e3 : std::nan(""));
      int64_t total = 0;
      for (int k = 0; k < kMemoryKinds; ++k) {
        kind_bytes[k]->push_back(curve[i][k]);
        total += curve[i][k];
      }
      allocated_bytes->push_back(total);
    }
  }
  return t;
}

Table OpsTable(const sim::Report& report) {
  Table t;
  CategoryWriter name(t.AddCategorical("name"));
  auto* calls = t.Add<int64_t>("calls");
  auto* total_ns = t.Add<int64_t>("total_ns");
  auto* share = t.Add<double>("share");
  // The recorded time beside the prediction, as --json's RecordedJson.
  auto* recorded_calls = t.Add<int64_t>("recorded_calls");
  auto* recorded_ns = t.Add<int64_t>("recorded_ns");
  auto* predicted_of_recorded_ns = t.Add<int64_t>("predicted_of_recorded_ns");
  for (const sim::OpRow& o : report.ops) {
    name.Append(o.name);
    calls->push_back(o.calls);
    total_ns->push_back(o.total_ns);
    share->push_back(o.share);
    recorded_calls->push_back(o.recorded.calls);
    recorded_ns->push_back(o.recorded.recorded_ns);
    predicted_of_recorded_ns->push_back(o.recorded.predicted_ns);
  }
  return t;
}

Table CollectivesTable(const sim::Report& report) {
  Table t;
  CategoryWriter type(t.AddCategorical("type"));
  CategoryWriter group(t.AddCategorical("group"));
  auto* group_size = t.Add<int64_t>("group_size");
  auto* bytes = t.Add<uint64_t>("bytes");
  auto* calls = t.Add<int64_t>("calls");
  auto* total_ns = t.Add<int64_t>("total_ns");
  auto* wait_ns = t.Add<int64_t>("wait_ns");
  auto* share = t.Add<double>("share");
  auto* synthesized = t.Add<bool>("synthesized");
  for (const sim::CollectiveRow& c : report.collectives) {
    type.Append(c.type);
    group.Append(c.group);
    group_size->push_back(c.group_size);
    bytes->push_back(c.bytes);
    calls->push_back(c.calls);
    total_ns->push_back(c.total_ns);
    wait_ns->push_back(c.wait_ns);
    share->push_back(c.share);
    synthesized->push_back(c.synthesized);
  }
  return t;
}

Table CriticalPathTable(const sim::Report& report) {
  Table t;
  auto* node = t.Add<uint64_t>("node");
  CategoryWriter name(t.AddCategorical("name"));
  auto* start_ns = t.Add<int64_t>("start_ns");
  auto* duration_ns = t.Add<int64_t>("duration_ns");
  for (const sim::CriticalStep& s : report.critical_path) {
    node->push_back(s.node_id);
    name.Append(s.name);
    start_ns->push_back(s.start_ns);
    duration_ns->push_back(s.duration_ns);
  }
  return t;
}

}  // namespace et::python
