// Kineto-only import; see kineto_only_import.h.
#include "converter/kineto_only/kineto_only_import.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "converter/graph/convert_host_ops.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "model/comm_type.h"
#include "nlohmann/json.hpp"

namespace et::convert {
namespace {

using kineto::EventKind;
using kineto::KinetoEvent;
using kineto::KinetoTrace;

// The schema the host ops are read as (nested attrs, `ctrl_deps`).
constexpr char kSynthSchema[] = "1.1.1-chakra.0.0.4";

std::string Quoted(absl::string_view text) {
  return nlohmann::json(std::string(text)).dump();
}

// The record_param_comms args as the attributes of that op.
void AddCommAttrs(const KinetoTrace& trace, const KinetoEvent& e,
                  HostOpBuilder* ops) {
  const kineto::CommArgs& c = trace.comm_args()[e.comm];
  if (!c.collective_name.empty())
    ops->AddStringAttr("collective_name", c.collective_name);
  if (c.in_msg_nelems >= 0) ops->AddIntAttr("in_msg_nelems", c.in_msg_nelems);
  if (c.out_msg_nelems >= 0)
    ops->AddIntAttr("out_msg_nelems", c.out_msg_nelems);
  if (!c.dtype.empty()) ops->AddStringAttr("dtype", c.dtype);
  if (e.pg_name != 0) ops->AddStringAttr("pg_name", trace.name(e.pg_name));
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

// An ET type for each Kineto `Input type`: a tensor's is its dtype's name
// ("float", "c10::BFloat16", "long int"), which the ET spells
// "Tensor(float)"; "Scalar", "ScalarList", "TensorList" and "" (None, strings,
// ...) are the same words in both.
std::string EtTypesJson(const std::string& kineto_types) {
  nlohmann::json types = nlohmann::json::parse(kineto_types, nullptr,
                                               /*allow_exceptions=*/false);
  if (!types.is_array()) return "";
  for (nlohmann::json& t : types) {
    if (!t.is_string()) return "";
    const std::string name = t.get<std::string>();
    if (name.empty() || absl::EndsWith(name, "List") || name == "Scalar")
      continue;
    t = absl::StrCat("Tensor(", name, ")");
  }
  return types.dump();
}

// Whether `dims` is a list of integer lists, as the ET reader requires of
// shapes (the same byte rule).
bool IsShapesList(absl::string_view dims) {
  if (dims.empty() || dims.front() != '[') return false;
  for (char c : dims) {
    if (!((c >= '0' && c <= '9') || c == '[' || c == ']' || c == ',' ||
          c == '-' || c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
      return false;
    }
  }
  return true;
}

// The inputs of each host op: the op's recorded shapes and types
// (record_shapes=True) where the trace has them, else empty lists. No values:
// a Kineto trace has no tensor ids. Types texts repeat, so each is mapped
// once.
class InputsWriter {
 public:
  explicit InputsWriter(const KinetoTrace& trace) : trace_(trace) {}

  // Valid until the next call.
  HostOpInputs Of(const KinetoEvent& e) {
    if (e.inputs < 0) return HostOpInputs();
    const kineto::OpInputs& in = trace_.op_inputs()[e.inputs];
    auto [it, fresh] = types_.try_emplace(in.types_json);
    if (fresh) it->second = EtTypesJson(in.types_json);
    if (it->second.empty() || !IsShapesList(in.dims_json)) {
      ++bad_shapes_;
      return HostOpInputs();
    }
    ++with_shapes_;
    HostOpInputs inputs;
    // As the ET parser kept the list: to its closing bracket.
    inputs.shapes = absl::StripTrailingAsciiWhitespace(in.dims_json);
    inputs.types = it->second;
    return inputs;
  }
  int64_t with_shapes() const { return with_shapes_; }
  int64_t bad_shapes() const { return bad_shapes_; }

 private:
  const KinetoTrace& trace_;
  absl::flat_hash_map<std::string, std::string> types_;
  int64_t with_shapes_ = 0;
  int64_t bad_shapes_ = 0;
};

// The collective an op stands for: a c10d call (or its record_param_comms
// record) or a backend's work record (gloo:*, nccl:*, mpi:*, ucc:*).
struct CommOp {
  CommSpelling spelling;
  bool work_record = false;
};
std::optional<CommOp> CommOf(const KinetoTrace& trace, const KinetoEvent& e) {
  const absl::string_view name = trace.name(e.name);
  if (name == "record_param_comms") {
    if (e.comm < 0) return std::nullopt;
    auto s = ParseCommName(trace.comm_args()[e.comm].collective_name);
    if (!s.has_value()) return std::nullopt;
    return CommOp{*s, false};
  }
  bool work = false;
  for (absl::string_view prefix : {"gloo:", "nccl:", "mpi:", "ucc:"})
    work |= absl::StartsWith(name, prefix);
  if (!work && !absl::StartsWith(name, "c10d::") &&
      !absl::StartsWith(name, "_c10d_functional::") &&
      !absl::StartsWith(name, "c10d_functional::")) {
    return std::nullopt;
  }
  auto s = ParseCommName(name);
  if (!s.has_value() || s->kind == CommKind::kWait ||
      s->kind == CommKind::kOther) {
    return std::nullopt;
  }
  return CommOp{*s, work};
}

bool SameComm(const CommSpelling& a, const CommSpelling& b) {
  return a.kind == b.kind &&
         (a.kind != CommKind::kCollective || a.type == b.type);
}

// Work records the backend ran on its own thread (gloo's worker: the torch
// 1.13 DDP traces' gloo:all_reduce runs on another tid than its
// c10d::allreduce_), keyed by event, with the call each stands for: the latest
// call of the same collective that started before it and has no record yet.
// The host ops nest such a record under its call, as the ET reader
// folds a stray record into its call through a shared tensor, which a Kineto
// trace does not have; without it every such collective would count twice.
absl::flat_hash_map<int32_t, int32_t> StrayWorkRecordCalls(
    const KinetoTrace& trace, const kineto::CpuOpNesting& nesting,
    const std::vector<std::tuple<int64_t, size_t, size_t>>& order) {
  auto under_comm = [&](int32_t e) {
    for (int32_t p = nesting.parent(e); p >= 0; p = nesting.parent(p)) {
      if (CommOf(trace, trace.events()[p]).has_value()) return true;
    }
    return false;
  };
  struct Call {
    int32_t event;
    CommSpelling spelling;
    bool taken;
  };
  std::vector<Call> calls;  // outermost calls, in start order
  absl::flat_hash_map<int32_t, int32_t> call_of;
  const auto& threads = nesting.threads();
  for (const auto& [ts, t, p] : order) {
    const int32_t e = threads[t].ops[p];
    const std::optional<CommOp> c = CommOf(trace, trace.events()[e]);
    if (!c.has_value() || under_comm(e)) continue;
    if (!c->work_record) {
      calls.push_back({e, c->spelling, false});
      continue;
    }
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      if (it->taken || !SameComm(it->spelling, c->spelling)) continue;
      it->taken = true;
      call_of[e] = it->event;
      break;
    }
  }
  return call_of;
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

absl::StatusOr<HostOpBuilder> BuildKinetoHostOps(
    const KinetoTrace& trace, const kineto::CpuOpNesting& nesting,
    const std::string& source, KinetoOnlyStats* stats,
    std::vector<int32_t>* event_of_id) {
  RETURN_IF_ERROR(CheckGpuIds(trace, source));
  const auto& threads = nesting.threads();
  if (static_cast<int64_t>(threads.size()) > kMaxTraceThreads) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: CPU ops on %d threads, over the limit of %d threads in one trace",
        source, threads.size(), kMaxTraceThreads));
  }
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
  event_of_id->assign(first_op_id + order.size(), -1);
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& [ts, t, p] = order[k];
    id_of_event[threads[t].ops[p]] = first_op_id + k;
    (*event_of_id)[first_op_id + k] = threads[t].ops[p];
  }

  // The root, one op per thread, the process groups, then the ops: the
  // layout of an ET that PyTorch records. Room for the GPU ops that the
  // linker appends: growing the vector then copied every op at the peak.
  const auto gpu_ops = std::count_if(
      trace.events().begin(), trace.events().end(), [](const KinetoEvent& e) {
        return e.kind == EventKind::kKernel || e.kind == EventKind::kMemcpy ||
               e.kind == EventKind::kMemset;
      });
  HostOpBuilder ops(source, first_op_id + order.size() + gpu_ops);
  ops.SetField("schema", Quoted(kSynthSchema));
  ops.SetField("pid", absl::StrCat(threads.empty() ? 0 : threads[0].pid));
  RETURN_IF_ERROR(ops.Add(1, "[pytorch|profiler|execution_trace|process]", 1,
                          /*tid=*/0, HostOpInputs()));
  for (size_t t = 0; t < threads.size(); ++t) {
    RETURN_IF_ERROR(ops.Add(2 + t, "[pytorch|profiler|execution_trace|thread]",
                            1, threads[t].tid, HostOpInputs()));
  }
  const nlohmann::json groups = ProcessGroups(trace);
  if (!groups.empty()) {
    const std::string values = absl::StrCat("[", Quoted(groups.dump()), "]");
    HostOpInputs inputs;
    inputs.values = values;
    inputs.shapes = "[[]]";
    inputs.types = R"(["String"])";
    inputs.strides = "[[]]";
    // On the first thread, as PyTorch records it (an ET op without a thread
    // would count as a thread with nothing matched).
    RETURN_IF_ERROR(ops.Add(2 + threads.size(), "## process_group:init ##", 2,
                            threads.empty() ? 0 : threads[0].tid, inputs));
    stats->process_groups = static_cast<int64_t>(groups.size());
  }
  InputsWriter inputs(trace);
  const absl::flat_hash_map<int32_t, int32_t> stray_calls =
      StrayWorkRecordCalls(trace, nesting, order);
  stats->work_records_nested = static_cast<int64_t>(stray_calls.size());
  for (const auto& [ts, t, p] : order) {
    const int32_t e = threads[t].ops[p];
    const KinetoEvent& event = trace.events()[e];
    auto call = stray_calls.find(e);
    const int32_t parent =
        call != stray_calls.end() ? call->second : nesting.parent(e);
    const uint64_t parent_id = parent >= 0 ? id_of_event[parent] : 2 + t;
    RETURN_IF_ERROR(ops.Add(id_of_event[e], trace.name(event.name), parent_id,
                            threads[t].tid, inputs.Of(event)));
    if (event.comm >= 0) {
      AddCommAttrs(trace, event, &ops);
      ++stats->comm_ops;
    }
  }
  stats->ops_with_shapes = inputs.with_shapes();
  stats->ops_with_bad_shapes = inputs.bad_shapes();
  stats->cpu_ops = static_cast<int64_t>(order.size());
  stats->threads = static_cast<int64_t>(threads.size());
  return ops;
}

absl::StatusOr<ConvertReport> ConvertKinetoTrace(
    std::shared_ptr<const KinetoTrace> trace, const std::string& source_path,
    const std::string& output_path, const ConvertOptions& options,
    KinetoOnlyStats* stats_out) {
  KinetoOnlyStats stats;
  // Nested once, for the host ops and for the linker.
  auto nesting = std::make_shared<const kineto::CpuOpNesting>(*trace);
  auto event_of_id = std::make_shared<std::vector<int32_t>>();
  ASSIGN_OR_RETURN(HostOpBuilder ops,
                   BuildKinetoHostOps(*trace, *nesting, source_path, &stats,
                                      event_of_id.get()));
  if (stats.cpu_ops == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the Kineto trace has no cpu_op events: no host ops to build a "
        "graph on",
        source_path));
  }
  ConvertOptions o = options;
  o.kineto_path = source_path;
  o.kineto_trace = trace;
  o.kineto_nesting = std::move(nesting);
  o.kineto_event_of_id = std::move(event_of_id);
  o.source_path = source_path;
  struct stat st;
  const int64_t input_bytes =
      stat(source_path.c_str(), &st) == 0 ? st.st_size : 0;
  ASSIGN_OR_RETURN(
      ConvertReport converted,
      ConvertHostOps(std::move(ops), source_path, input_bytes, output_path, o));
  absl::StatusOr<ConvertReport> report = std::move(converted);
  report->schema = "Kineto trace alone (no execution trace)";
  report->input_units = "Kineto host ops";
  report->notes.insert(
      report->notes.begin(),
      absl::StrFormat(
          "Kineto only: %d host ops from the trace's cpu_op/user_annotation "
          "events on %d threads (%d with recorded shapes, %d collectives with "
          "record_param_comms args, %d process groups); no tensor ids, so no "
          "data dependencies: host ops are ordered by thread and time",
          stats.cpu_ops, stats.threads, stats.ops_with_shapes, stats.comm_ops,
          stats.process_groups));
  if (stats.work_records_nested > 0) {
    report->notes.push_back(absl::StrFormat(
        "Kineto only: %d backend work records (gloo:*, ...) ran on another "
        "thread than their c10d call; each is folded into the latest earlier "
        "call of the same collective",
        stats.work_records_nested));
  }
  if (stats.ops_with_bad_shapes > 0) {
    report->warnings.push_back(absl::StrFormat(
        "Kineto only: %d host ops have `Input Dims`/`Input type` that are not "
        "lists of shapes and types: written without shapes",
        stats.ops_with_bad_shapes));
  }
  if (stats_out != nullptr) *stats_out = stats;
  return report;
}

// A trace without record_param_comms args (PyTorch before 2.0, the legacy
// profiler, HTA's sampled traces) names its collectives but not their sizes
// or groups: a Kineto-only graph has no tensors to take them from either.
static void WarnSizeUnknown(bool has_groups, ConvertReport* report) {
  int64_t unknown = 0;
  for (const auto& [type, count] : report->collectives_by_type) {
    auto bytes = report->collective_bytes_by_type.find(type);
    if (bytes == report->collective_bytes_by_type.end() || bytes->second == 0)
      unknown += count;
  }
  if (unknown == 0) return;
  report->warnings.push_back(absl::StrFormat(
      "Kineto only: %d collectives have no message size in the trace (no "
      "record_param_comms args): size unknown, written as comm_size 0%s",
      unknown,
      has_groups
          ? ""
          : "; and no process group: each is over every rank converted"));
}

absl::StatusOr<ConvertReport> ConvertKinetoOnly(const std::string& input_path,
                                                const std::string& output_path,
                                                const ConvertOptions& options) {
  ASSIGN_OR_RETURN(KinetoTrace trace, KinetoTrace::Load(input_path));
  const std::vector<std::string> read_warnings = trace.read_warnings();
  KinetoOnlyStats stats;
  absl::StatusOr<ConvertReport> report =
      ConvertKinetoTrace(std::make_shared<const KinetoTrace>(std::move(trace)),
                         input_path, output_path, options, &stats);
  if (report.ok()) {
    WarnSizeUnknown(stats.process_groups > 0, &*report);
    report->warnings.insert(report->warnings.end(), read_warnings.begin(),
                            read_warnings.end());
  }
  return report;
}

}  // namespace et::convert
