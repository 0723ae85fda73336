// Kineto-only import; see kineto_only_import.h.
#include "converter/kineto_only_import.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/atomic_output_file.h"
#include "base/gzip_input.h"
#include "base/status_macros.h"
#include "converter/converter.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "nlohmann/json.hpp"

namespace et::convert {
namespace {

using kineto::EventKind;
using kineto::KinetoEvent;
using kineto::KinetoTrace;

// The schema the synthesized ET is written in (nested attrs, `ctrl_deps`).
constexpr char kSynthSchema[] = "1.1.1-chakra.0.0.4";
constexpr char kEmptyIo[] =
    R"({"values": [], "shapes": [], "types": [], "strides": []})";

std::string Quoted(absl::string_view text) {
  return nlohmann::json(std::string(text)).dump();
}

void AppendNode(uint64_t id, absl::string_view name, uint64_t parent,
                const std::string& inputs, const std::string& attrs,
                std::string* out) {
  absl::StrAppend(out, out->back() == '[' ? "\n" : ",\n", "{\"id\": ", id,
                  ", \"name\": ", Quoted(name), ", \"ctrl_deps\": ", parent,
                  ", \"inputs\": ", inputs, ", \"outputs\": ", kEmptyIo,
                  ", \"attrs\": [", attrs, "]}");
}

std::string IntAttr(absl::string_view name, int64_t value) {
  return absl::StrFormat(R"({"name": "%s", "type": "int64", "value": %d})",
                         name, value);
}
std::string StringAttr(absl::string_view name, absl::string_view value) {
  return absl::StrFormat(R"({"name": "%s", "type": "string", "value": %s})",
                         name, Quoted(value));
}

// The record_param_comms args as the ET's attributes of that op.
std::string CommAttrs(const KinetoTrace& trace, const KinetoEvent& e) {
  const kineto::CommArgs& c = trace.comm_args()[e.comm];
  std::vector<std::string> attrs;
  if (!c.collective_name.empty())
    attrs.push_back(StringAttr("collective_name", c.collective_name));
  if (c.in_msg_nelems >= 0)
    attrs.push_back(IntAttr("in_msg_nelems", c.in_msg_nelems));
  if (c.out_msg_nelems >= 0)
    attrs.push_back(IntAttr("out_msg_nelems", c.out_msg_nelems));
  if (!c.dtype.empty()) attrs.push_back(StringAttr("dtype", c.dtype));
  if (e.pg_name != 0)
    attrs.push_back(StringAttr("pg_name", trace.name(e.pg_name)));
  return absl::StrJoin(attrs, ", ");
}

// The process groups: distributedInfo.pg_config, then any group a collective
// names that it lacks (from the collective's own `Process Group Ranks`), in
// the layout ParseProcessGroupJson reads.
nlohmann::json ProcessGroups(const KinetoTrace& trace) {
  absl::btree_map<std::string, nlohmann::json> groups;
  nlohmann::json config = nlohmann::json::parse(trace.pg_config_json(), nullptr,
                                                /*allow_exceptions=*/false);
  if (config.is_array()) {
    for (const auto& g : config) {
      if (!g.is_object() || !g.contains("pg_name")) continue;
      nlohmann::json entry = {{"pg_name", g["pg_name"]}};
      for (const char* key : {"pg_desc", "backend_config", "ranks"}) {
        if (g.contains(key)) entry[key] = g[key];
      }
      if (g.contains("pg_size")) entry["group_size"] = g["pg_size"];
      const std::string name = g["pg_name"].is_string()
                                   ? g["pg_name"].get<std::string>()
                                   : g["pg_name"].dump();
      groups.emplace(name, std::move(entry));
    }
  }
  for (const KinetoEvent& e : trace.events()) {
    if (e.comm < 0 || e.pg_name == 0) continue;
    const std::string name(trace.name(e.pg_name));
    if (groups.contains(name)) continue;
    const kineto::CommArgs& c = trace.comm_args()[e.comm];
    nlohmann::json entry = {{"pg_name", name}, {"pg_desc", c.pg_desc}};
    nlohmann::json ranks = nlohmann::json::parse(c.group_ranks, nullptr, false);
    if (ranks.is_array()) entry["ranks"] = ranks;
    if (c.group_size > 0) entry["group_size"] = c.group_size;
    groups.emplace(name, std::move(entry));
  }
  nlohmann::json out = nlohmann::json::array();
  for (auto& [name, entry] : groups) out.push_back(std::move(entry));
  return out;
}

absl::Status CheckGpuIds(const KinetoTrace& trace, const std::string& source) {
  int64_t index = 0;
  for (const KinetoEvent& e : trace.events()) {
    const bool gpu = e.kind == EventKind::kKernel ||
                     e.kind == EventKind::kMemcpy ||
                     e.kind == EventKind::kMemset;
    if (gpu && e.correlation < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: GPU event #%d '%s' (ts %.3f us) has no 'correlation' id: "
          "nothing ties it to the call that launched it",
          source, index, trace.name(e.name).substr(0, 60), e.ts_ns / 1000.0));
    }
    ++index;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> IsKinetoTrace(const std::string& path) {
  ASSIGN_OR_RETURN(GzipInput in, GzipInput::Open(path));
  std::string head(64 << 10, '\0');
  size_t filled = 0;
  while (filled < head.size()) {
    auto n = in.Read(head.data() + filled, head.size() - filled);
    if (!n.ok() || *n == 0) break;  // a short or broken file: the ET path says
    filled += *n;
  }
  head.resize(filled);
  const size_t start = head.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return false;
  if (head[start] == '[') {
    // The legacy profiler's array of event objects (anything else is left to
    // the ET reader's error).
    const size_t first = head.find_first_not_of(" \t\r\n", start + 1);
    return first != std::string::npos && head[first] == '{';
  }
  const size_t events = head.find("\"traceEvents\"");
  const size_t nodes = head.find("\"nodes\"");
  if (events != std::string::npos && events < nodes) return true;
  // Kineto writes its metadata before the events; an ET starts with `schema`.
  return nodes == std::string::npos &&
         (head.find("\"schemaVersion\"") != std::string::npos ||
          head.find("\"deviceProperties\"") != std::string::npos);
}

absl::StatusOr<std::string> SynthesizeEtJson(const KinetoTrace& trace,
                                             const std::string& source,
                                             KinetoOnlyStats* stats) {
  RETURN_IF_ERROR(CheckGpuIds(trace, source));
  const kineto::CpuOpNesting nesting(trace);
  const auto& threads = nesting.threads();
  // Ids in start order across threads, parents before their children.
  std::vector<std::tuple<int64_t, size_t, size_t>> order;  // ts, thread, pos
  for (size_t t = 0; t < threads.size(); ++t) {
    for (size_t p = 0; p < threads[t].ops.size(); ++p) {
      order.emplace_back(trace.events()[threads[t].ops[p]].ts_ns, t, p);
    }
  }
  std::sort(order.begin(), order.end());
  const uint64_t first_op_id = 2 + threads.size() + 1;
  std::vector<uint64_t> id_of_event(trace.events().size(), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& [ts, t, p] = order[k];
    id_of_event[threads[t].ops[p]] = first_op_id + k;
  }

  std::string out =
      absl::StrFormat("{\"schema\": \"%s\", \"pid\": %d, \"nodes\": [",
                      kSynthSchema, threads.empty() ? 0 : threads[0].pid);
  AppendNode(1, "[pytorch|profiler|execution_trace|process]", 1, kEmptyIo, "",
             &out);
  for (size_t t = 0; t < threads.size(); ++t) {
    AppendNode(2 + t, "[pytorch|profiler|execution_trace|thread]", 1, kEmptyIo,
               IntAttr("tid", threads[t].tid), &out);
  }
  const nlohmann::json groups = ProcessGroups(trace);
  if (!groups.empty()) {
    const std::string inputs = absl::StrCat(
        "{\"values\": [", Quoted(groups.dump()),
        "], \"shapes\": [[]], \"types\": [\"String\"], \"strides\": [[]]}");
    // On the first thread, as PyTorch records it (an ET op without a thread
    // would count as a thread with nothing matched).
    AppendNode(2 + threads.size(), "## process_group:init ##", 2, inputs,
               threads.empty() ? "" : IntAttr("tid", threads[0].tid), &out);
    stats->process_groups = static_cast<int64_t>(groups.size());
  }
  for (const auto& [ts, t, p] : order) {
    const int32_t e = threads[t].ops[p];
    const KinetoEvent& event = trace.events()[e];
    const int32_t parent = nesting.parent(e);
    std::string attrs = IntAttr("tid", threads[t].tid);
    if (event.comm >= 0) {
      absl::StrAppend(&attrs, ", ", CommAttrs(trace, event));
      ++stats->comm_ops;
    }
    AppendNode(id_of_event[e], trace.name(event.name),
               parent >= 0 ? id_of_event[parent] : 2 + t, kEmptyIo, attrs,
               &out);
  }
  out += "\n]}\n";
  stats->cpu_ops = static_cast<int64_t>(order.size());
  stats->threads = static_cast<int64_t>(threads.size());
  return out;
}

absl::StatusOr<ConvertReport> ConvertKinetoTrace(
    std::shared_ptr<const KinetoTrace> trace, const std::string& source_path,
    const std::string& output_path, const ConvertOptions& options) {
  KinetoOnlyStats stats;
  ASSIGN_OR_RETURN(std::string et_json,
                   SynthesizeEtJson(*trace, source_path, &stats));
  if (stats.cpu_ops == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the Kineto trace has no cpu_op events: no host ops to build a "
        "graph on",
        source_path));
  }
  const std::string et_path = TempPathFor(output_path + ".host-ops.json");
  if (auto s = WriteFileAtomically(et_path, et_json); !s.ok()) {
    DiscardTempFile(et_path);
    return s;
  }
  et_json.clear();
  et_json.shrink_to_fit();
  ConvertOptions o = options;
  o.kineto_path = source_path;
  o.kineto_trace = trace;
  o.source_path = source_path;
  if (o.rank < 0 && trace->rank() >= 0)
    o.rank = static_cast<int>(trace->rank());
  absl::StatusOr<ConvertReport> report = ConvertFile(et_path, output_path, o);
  DiscardTempFile(et_path);
  if (!report.ok()) {
    // Name the user's file, not the intermediate one.
    return absl::Status(report.status().code(),
                        absl::StrReplaceAll(report.status().message(),
                                            {{et_path, source_path}}));
  }
  report->schema = "Kineto trace alone (no execution trace)";
  report->notes.insert(
      report->notes.begin(),
      absl::StrFormat(
          "Kineto only: %d host ops from the trace's cpu_op/user_annotation "
          "events on %d threads (%d collectives with record_param_comms args, "
          "%d process groups); no tensor ids, so no data dependencies: host "
          "ops are ordered by thread and time",
          stats.cpu_ops, stats.threads, stats.comm_ops, stats.process_groups));
  return report;
}

absl::StatusOr<ConvertReport> ConvertKinetoOnly(const std::string& input_path,
                                                const std::string& output_path,
                                                const ConvertOptions& options) {
  ASSIGN_OR_RETURN(KinetoTrace trace, KinetoTrace::Load(input_path));
  return ConvertKinetoTrace(
      std::make_shared<const KinetoTrace>(std::move(trace)), input_path,
      output_path, options);
}

}  // namespace et::convert
