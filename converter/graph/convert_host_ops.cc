// Host ops -> Chakra graph: call-tree repair, linked-trace order, the Kineto
// merge, op table -> collectives -> keep plan -> dependencies -> node emitter
// -> .et writer. See convert_host_ops.h.
#include "converter/graph/convert_host_ops.h"

#include <chrono>
#include <cmath>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "converter/common/json_text.h"
#include "converter/graph/collective_resolver.h"
#include "converter/graph/container_inputs.h"
#include "converter/graph/dependency_builder.h"
#include "converter/graph/graph_digest.h"
#include "converter/graph/keep_plan.h"
#include "converter/graph/nesting_repair.h"
#include "converter/graph/node_emitter.h"
#include "converter/graph/op_table.h"
#include "converter/kineto/kineto_merge.h"
#include "converter/kineto/linked_order.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"
#include "step/host_cost.h"
#include "step/step_model.h"

namespace et::convert {
namespace {

// The process-group table of the `## process_group:init ##` op(s).
absl::StatusOr<std::vector<ProcessGroup>> ReadProcessGroups(
    const std::string& path, const OpTable& table, TraceTextSource* source) {
  std::vector<ProcessGroup> groups;
  for (uint32_t i = 0; i < table.size(); ++i) {
    if (!IsProcessGroupInitName(table.name(i))) continue;
    ASSIGN_OR_RETURN(absl::string_view node_text,
                     source->NodeText(table.op(i)));
    absl::string_view text = table.op(i).io(node_text, kInValues);
    nlohmann::json values =
        nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (!values.is_array() || values.empty() || !values[0].is_string()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: node %d: process-group table is not a JSON string", path,
          table.op(i).id));
    }
    auto parsed = ParseProcessGroupJson(values[0].get<std::string>());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: node %d: %s", path, table.op(i).id, parsed.status().message()));
    }
    for (auto& g : *parsed) groups.push_back(std::move(g));
  }
  return groups;
}

// The size of the job the graph is a rank of: what the run recorded (the
// process-group table's group 0, else Kineto's distributedInfo), else the
// ranks converted together (--ranks N); 0 unknown.
int64_t WorldSize(const std::vector<ProcessGroup>& groups,
                  const KinetoMergeStats& kineto,
                  const ConvertOptions& options) {
  for (const ProcessGroup& g : groups) {
    if (g.name == "0" && g.size > 0) return g.size;
  }
  return kineto.world_size > 0 ? kineto.world_size : options.world_size;
}

ChakraProtoMsg::GlobalMetadata MakeMetadata(
    const std::map<std::string, std::string>& fields,
    const std::string& input_path, const std::vector<ProcessGroup>& groups,
    const KinetoMergeStats& kineto, int rank, const ConvertOptions& options) {
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* attrs = meta.mutable_attr();
  SetString(attrs, attr::kSchema, TopLevelString(fields, "schema"));
  SetString(attrs, attr::kSourceFile, input_path);
  auto pid = fields.find("pid");
  int64_t pid_value = 0;
  if (pid != fields.end() && absl::SimpleAtoi(pid->second, &pid_value)) {
    SetInt64(attrs, attr::kPid, pid_value);
  }
  if (std::string time = TopLevelString(fields, "time"); !time.empty())
    SetString(attrs, attr::kRecordTime, time);
  if (rank >= 0) SetInt64(attrs, attr::kRank, rank);
  if (const int64_t world = WorldSize(groups, kineto, options); world > 0)
    SetInt64(attrs, attr::kWorldSize, world);
  if (!groups.empty()) EncodeProcessGroups(groups, attrs);
  return meta;
}

// Everything step 3 derives from the ops; the emitter reads all of it.
struct TraceStructure {
  OpTable table;
  std::vector<ProcessGroup> groups;
  CollectiveResolver comms;
  KeepPlan plan;
  std::vector<NodeDeps> deps;
};

// Before anything reads parents, and while `ops` is still in file order:
// PyTorch's observer can nest ops under an asynchronous collective record.
void RepairCallTree(const StringPool& pool, std::vector<HostOp>* ops,
                    ConvertReport* summary) {
  const NestingRepairStats nesting = RepairCollectiveRecordNesting(ops, pool);
  if (nesting.ops_reparented > 0) {
    summary->warnings.push_back(absl::StrFormat(
        "call tree repaired: %d ops on %d thread(s) had a wrong parent "
        "(PyTorch's observer nests ops under an asynchronous collective "
        "record such as gloo:all_reduce, depending on timing); rebuilt from "
        "start and end order (docs/et-convert.md)",
        nesting.ops_reparented, nesting.threads_repaired));
  }
  if (nesting.threads_left_as_recorded > 0) {
    summary->warnings.push_back(absl::StrFormat(
        "%d thread(s) nest ops under a collective record and their start and "
        "end orders do not make a tree: kept as recorded; ranks of one "
        "program may convert to graphs of different shapes",
        nesting.threads_left_as_recorded));
  }
}

// What the ET says about its run, for refusing another run's Kineto trace.
EtRun RunOfTrace(const std::string& input_path, const ConvertOptions& options,
                 const std::map<std::string, std::string>& fields) {
  EtRun run;
  run.path = input_path;
  run.rank = options.rank;
  run.local_time = TopLevelString(fields, "time");
  if (auto pid = fields.find("pid"); pid != fields.end())
    (void)absl::SimpleAtoi(pid->second, &run.pid);
  return run;
}

// The file the user named (a Kineto-only import names its trace).
const std::string& SourcePath(const std::string& input_path,
                              const ConvertOptions& options) {
  return options.source_path.empty() ? input_path : options.source_path;
}

// Linked ("ET+") files: ids renumbered by the linker are not start order, and
// later steps rely on id order being start order.
void RenumberLinkedTrace(std::vector<HostOp>* ops, StringPool* pool,
                         ConvertReport* summary) {
  const LinkedOrderStats linked_order = OrderLinkedTraceByStart(ops, pool);
  if (linked_order.moved > 0) {
    summary->warnings.push_back(absl::StrFormat(
        "linked trace: ids are not start order; %d of %d nodes renumbered by "
        "start (old id kept as source_id)",
        linked_order.moved, ops->size()));
  }
  if (linked_order.deps_against_time + linked_order.deps_to_absent > 0) {
    summary->warnings.push_back(absl::StrFormat(
        "linked trace: dropped %d inter_thread_dep/sync_dep on ops that start "
        "later and %d on ids absent from the trace",
        linked_order.deps_against_time, linked_order.deps_to_absent));
  }
}

// Step 2's counts in the report, so that a partial Kineto match is visible.
// `from_trace`: the host ops were made from this very trace (Kineto or nsys
// alone), so matching them with it says nothing and is not reported.
void ReportKineto(KinetoMergeStats* kineto, bool from_trace,
                  ConvertReport* summary) {
  summary->kineto_host_ops = kineto->host_ops_considered;
  summary->kineto_host_ops_matched = kineto->host_ops_matched;
  summary->gpu_ops = kineto->gpu_ops;
  summary->orphan_gpu_ops = kineto->orphan_gpu_ops;
  summary->orphan_gpu_ops_by_cause = {
      {"no launch record", kineto->orphans_without_launch_record},
      {"launch outside matched ops", kineto->orphans_with_unmatched_launch}};
  summary->gpu_ops_left_out = {
      {"other iterations", kineto->gpu_ops_outside_window}};
  summary->gpu_ops_before_trace = kineto->gpu_ops_before_trace;
  for (const auto& t : kineto->per_thread) {
    summary->kineto_by_thread[t.tid] = {t.matched, t.host_ops};
  }
  // A note, not a warning: a full match is the good case. Threads that
  // matched less than 99% get warnings of their own below.
  const std::string matched =
      from_trace
          ? std::string()
          : absl::StrFormat(
                "%d of %d host ops matched (%.1f%%), ",
                kineto->host_ops_matched, kineto->host_ops_considered,
                kineto->host_ops_considered ? 100.0 * kineto->host_ops_matched /
                                                  kineto->host_ops_considered
                                            : 0.0);
  summary->notes.push_back(absl::StrFormat(
      "Kineto: %s%d GPU ops (%d without a launcher; %d of other iterations "
      "left out; %d launched before the trace began, kept outside every "
      "step), %d sync edges",
      matched, kineto->gpu_ops, kineto->orphan_gpu_ops,
      kineto->gpu_ops_outside_window, kineto->gpu_ops_before_trace,
      kineto->sync_edges));
  for (auto& w : kineto->warnings) summary->warnings.push_back(std::move(w));
}

// Dependencies that could not be written, so that a user knows the graph has
// fewer edges than the trace.
void ReportDependencies(const DependencyBuilder& dep_builder,
                        ConvertReport* summary) {
  if (dep_builder.stats().missing_targets > 0) {
    summary->warnings.push_back(absl::StrFormat(
        "%d inter_thread_dep/sync_dep ids name nodes absent from the trace",
        dep_builder.stats().missing_targets));
  }
  if (dep_builder.stats().unresolved > 0) {
    summary->warnings.push_back(
        absl::StrFormat("%d dependencies on ops with no node standing for them "
                        "(profiler roots, empty "
                        "containers) were not written",
                        dep_builder.stats().unresolved));
  }
  if (dep_builder.stats().cross_thread_waits > 0) {
    summary->notes.push_back(absl::StrFormat(
        "waits between threads: %d, from the recorded times (a thread's range "
        "that another thread's work runs inside waits for it; the trace "
        "records no data flow)",
        dep_builder.stats().cross_thread_waits));
  }
}

// The Kineto trace's ProfilerStep#N periods, for an ET without step ops.
std::vector<StepWindow> StepWindows(const KinetoMergeStats& kineto) {
  std::vector<StepWindow> windows;
  for (size_t k = 0; k < kineto.step_starts_us.size(); ++k) {
    const int64_t step = StepNumberOfName(kineto.step_names[k]);
    if (step < 0) continue;
    windows.push_back({step, kineto.step_starts_us[k],
                       kineto.step_starts_us[k] + kineto.step_times_us[k]});
  }
  return windows;
}

// Step 3: call tree, process groups, collectives, granularity and
// dependencies, which decide what becomes a node and what it waits for.
absl::Status BuildStructure(const std::string& input_path,
                            const ConvertOptions& options,
                            std::unique_ptr<StringPool> pool,
                            ParsedTrace* parsed, TraceTextSource* text,
                            const KinetoMergeStats& kineto, TraceStructure* out,
                            ConvertReport* summary) {
  out->table.set_pool(std::move(pool));
  RETURN_IF_ERROR(out->table.Build(input_path, std::move(parsed->ops),
                                   std::move(parsed->tensors)));
  ASSIGN_OR_RETURN(out->groups,
                   ReadProcessGroups(input_path, out->table, text));
  RETURN_IF_ERROR(out->comms.Resolve(out->table, out->groups, text));
  if (std::string w = WorldOnlyGroupsWarning(out->comms.records(), out->groups);
      !w.empty()) {
    summary->warnings.push_back(std::move(w));
  }
  out->plan.Build(out->table, out->comms, options.granularity,
                  StepWindows(kineto));
  DependencyBuilder dep_builder;
  // An import of a profiler trace alone (Kineto, nsys) records no data flow:
  // the threads' recorded times say who waits for whom.
  RETURN_IF_ERROR(dep_builder.Build(input_path, out->table, out->comms,
                                    out->plan, &out->deps,
                                    options.kineto_trace != nullptr));
  ReportDependencies(dep_builder, summary);
  summary->skipped_by_reason = out->plan.skipped();
  return absl::OkStatus();
}

// The recorder's page-fault counts and cost (StepModel adds the faults the
// unprofiled run paid beyond the recording's). Without the truth's run
// (`with_unprofiled` false: a truth from the command line) its count is left
// out.
void SetPageFaults(const kineto::RecordedPageFaults& faults,
                   bool with_unprofiled,
                   ChakraProtoMsg::GlobalMetadata* metadata) {
  auto* attrs = metadata->mutable_attr();
  if (with_unprofiled && faults.unprofiled_per_step >= 0)
    SetDouble(attrs, attr::kUnprofiledPageFaultsPerStep,
              faults.unprofiled_per_step);
  if (faults.profiled_per_step >= 0)
    SetDouble(attrs, attr::kProfiledPageFaultsPerStep,
              faults.profiled_per_step);
  if (faults.ns_per_fault > 0 && faults.ns_per_fault < 1e9)
    SetInt64(attrs, attr::kPageFaultNs, std::llround(faults.ns_per_fault));
}

// What Kineto measured (step times, device) and the unprofiled time of a step,
// for the simulator to compare its prediction with.
void AddMeasuredMetadata(const KinetoMergeStats& kineto,
                         const ConvertOptions& options,
                         ChakraProtoMsg::GlobalMetadata* metadata) {
  if (!kineto.step_times_us.empty()) {
    auto* attrs = metadata->mutable_attr();
    SetStringList(attrs, attr::kStepNames, kineto.step_names);
    SetDoubleList(attrs, attr::kStepTimesUs, kineto.step_times_us);
    if (kineto.measured_step_us >= 0)
      SetDouble(attrs, attr::kMeasuredStepUs, kineto.measured_step_us);
  }
  const double unprofiled_us = options.measured_step_ms > 0
                                   ? options.measured_step_ms * 1000.0
                                   : kineto.unprofiled_step_us;
  if (unprofiled_us > 0)
    SetDouble(metadata->mutable_attr(), attr::kUnprofiledStepUs, unprofiled_us);
  // A truth given on the command line replaces the recording's (both, and
  // the blocks behind the first), and the faults its run paid are not known.
  if (options.measured_step_ms <= 0 && kineto.unprofiled_step_after_us > 0) {
    SetDouble(metadata->mutable_attr(), attr::kUnprofiledStepAfterUs,
              kineto.unprofiled_step_after_us);
  }
  if (options.measured_step_ms <= 0 &&
      !kineto.unprofiled_step_blocks_us.empty()) {
    SetDoubleList(metadata->mutable_attr(), attr::kUnprofiledStepBlocksUs,
                  kineto.unprofiled_step_blocks_us);
  }
  SetPageFaults(kineto.page_faults, options.measured_step_ms <= 0, metadata);
  if (!kineto.device_name.empty())
    SetString(metadata->mutable_attr(), attr::kDeviceName, kineto.device_name);
  if (kineto.device_compute_capability > 0)
    SetInt64(metadata->mutable_attr(), attr::kDeviceComputeCapability,
             kineto.device_compute_capability);
  if (kineto.unprofiled_peak_bytes > 0) {
    SetInt64(metadata->mutable_attr(), attr::kUnprofiledPeakBytes,
             kineto.unprofiled_peak_bytes);
    if (kineto.unprofiled_start_bytes >= 0)
      SetInt64(metadata->mutable_attr(), attr::kUnprofiledStartBytes,
               kineto.unprofiled_start_bytes);
  }
  if (kineto.gpu_queued_gap_us >= 0)
    SetDouble(metadata->mutable_attr(), attr::kGpuQueuedGapUs,
              kineto.gpu_queued_gap_us);
  if (kineto.nested_op_gap_us >= 0)
    SetDouble(metadata->mutable_attr(), attr::kNestedOpGapUs,
              kineto.nested_op_gap_us);
  if (kineto.view_op_span_us >= 0)
    SetDouble(metadata->mutable_attr(), attr::kViewOpSpanUs,
              kineto.view_op_span_us);
  if (options.host_costs) {
    HostTimeModel costs = *options.host_costs;
    if (kineto.light_profiler_ns_per_op >= 0) {
      costs.light_profiler_ns_per_op = kineto.light_profiler_ns_per_op;
      costs.light_profiler_source =
          "measured at record time (profiler_calibration)";
      if (kineto.probe_full_over_light_ns > 0)
        costs.probe_full_over_light_ns = kineto.probe_full_over_light_ns;
    }
    SetHostTimeModel(costs, metadata->mutable_attr());
  }
}

// Step 4: the metadata, then the nodes in ascending id order; the writer
// renames its temp file only once everything is written.
absl::Status WriteEt(const std::string& input_path,
                     const std::string& output_path,
                     const ConvertOptions& options,
                     const std::map<std::string, std::string>& fields,
                     const KinetoMergeStats& kineto,
                     const TraceStructure& structure, TraceTextSource* text,
                     ConvertReport* summary) {
  ASSIGN_OR_RETURN(auto writer, EtWriter::Open(output_path));
  ChakraProtoMsg::GlobalMetadata metadata =
      MakeMetadata(fields, SourcePath(input_path, options), structure.groups,
                   kineto, summary->rank, options);
  AddMeasuredMetadata(kineto, options, &metadata);
  int64_t node_count = 0;
  for (uint32_t i = 0; i < structure.table.size(); ++i)
    node_count += structure.plan.is_node(i) ? 1 : 0;
  RETURN_IF_ERROR(writer->WriteMetadata(metadata, node_count));
  auto digest = std::make_shared<GraphDigest>();
  digest->SetMetadata(metadata);
  NodeEmitter emitter(structure.table, structure.comms, structure.plan,
                      structure.deps, structure.groups, options);
  const ContainerInputs container_inputs(structure.table, structure.plan);
  ChakraProtoMsg::Node node;
  for (uint32_t i = 0; i < structure.table.size(); ++i) {
    if (!structure.plan.is_node(i)) continue;
    ASSIGN_OR_RETURN(const std::string held,
                     container_inputs.ValuesFor(i, text));
    ASSIGN_OR_RETURN(absl::string_view node_text,
                     text->NodeText(structure.table.op(emitter.IoSourceOf(i))));
    emitter.Emit(i, node_text, &node, summary);
    if (!held.empty())
      SetString(node.mutable_attr(), attr::kContainerInputs, held);
    RETURN_IF_ERROR(writer->WriteNode(node));
    digest->Add(node);
    ++summary->written_nodes;
  }
  RETURN_IF_ERROR(writer->Close());
  summary->digest = std::move(digest);
  return absl::OkStatus();
}

// Peerless sends/recvs became COMP nodes; say so, since a simulator sees no
// communication there.
void WarnPeerlessP2p(ConvertReport* summary) {
  if (auto it = summary->skipped_by_reason.find(kPeerlessP2pReason);
      it != summary->skipped_by_reason.end()) {
    summary->warnings.push_back(absl::StrFormat(
        "%d sends/recvs name no peer rank: written as COMP nodes, not "
        "communication (a simulator could not pair them)",
        it->second));
  }
}

}  // namespace

// The report's fields known before any reading, so that every error path
// still names its files.
ConvertReport StartReport(const std::string& input_path,
                          const std::string& output_path,
                          const ConvertOptions& options, int64_t input_bytes) {
  ConvertReport summary;
  summary.input_path = SourcePath(input_path, options);
  summary.output_path = output_path;
  summary.rank = options.rank;
  summary.input_bytes = input_bytes;
  return summary;
}

// Steps 2 to 4 on parsed (or built) host ops: Kineto linking, structure,
// output.
absl::StatusOr<ConvertReport> ConvertParsed(
    const std::string& input_path, const std::string& output_path,
    const ConvertOptions& options, std::chrono::steady_clock::time_point start,
    ProgressLine* progress, std::unique_ptr<StringPool> pool,
    ParsedTrace* parsed, TraceTextSource* text, ConvertReport summary) {
  RepairCallTree(*pool, &parsed->ops, &summary);
  RenumberLinkedTrace(&parsed->ops, pool.get(), &summary);

  // 2. Optional Kineto trace of the same run: measured times, GPU ops, sync,
  // steps.
  KinetoMergeStats kineto;
  if (!options.kineto_path.empty()) {
    progress->Stage("linking Kineto");
    RETURN_IF_ERROR(MergeKineto(options.kineto_path, options.kineto_trace.get(),
                                options.kineto_nesting.get(),
                                options.kineto_event_of_id.get(),
                                RunOfTrace(input_path, options, parsed->fields),
                                pool.get(), &parsed->ops, &kineto));
    ReportKineto(&kineto, options.kineto_trace != nullptr, &summary);
    // The rank the command line gives, else the one the profiler recorded.
    if (summary.rank < 0) summary.rank = static_cast<int>(kineto.rank);
  }

  // 3. Structure: call tree, process groups, collectives, granularity,
  // dependencies.
  progress->Stage("building graph");
  TraceStructure structure;
  RETURN_IF_ERROR(BuildStructure(input_path, options, std::move(pool), parsed,
                                 text, kineto, &structure, &summary));

  // 4. Emit nodes in ascending id order.
  progress->Stage("writing");
  RETURN_IF_ERROR(WriteEt(input_path, output_path, options, parsed->fields,
                          kineto, structure, text, &summary));
  WarnPeerlessP2p(&summary);
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return summary;
}

absl::StatusOr<ConvertReport> ConvertHostOps(HostOpBuilder builder,
                                             const std::string& input_path,
                                             int64_t input_bytes,
                                             const std::string& output_path,
                                             const ConvertOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(options.show_progress, input_path);
  ConvertReport summary =
      StartReport(input_path, output_path, options, input_bytes);
  ParsedTrace parsed = builder.TakeParsed();
  TraceTextSource text;
  text.UseText(builder.TakeText());
  summary.schema = TopLevelString(parsed.fields, "schema");
  summary.et_nodes = static_cast<int64_t>(parsed.ops.size());
  if (parsed.ops.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the trace has no nodes", input_path));
  }
  return ConvertParsed(input_path, output_path, options, start, &progress,
                       builder.TakePool(), &parsed, &text, std::move(summary));
}

}  // namespace et::convert
