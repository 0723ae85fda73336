// Nsight Systems import; see nsys_import.h.
#include "converter/nsys/nsys_import.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "converter/kineto_only/kineto_only_import.h"
#include "converter/nsys/nsys_database.h"
#include "converter/nsys/nsys_graph_builder.h"
#include "converter/nsys/nsys_tables.h"

namespace et::convert {
namespace {

void AddNotes(const nsys::NsysTables& tables, const nsys::NsysGraph& g,
              ConvertReport* report) {
  const nsys::NsysGraphStats& s = g.stats;
  report->schema =
      absl::StrFormat("Nsight Systems export, schema %s (nsys %s)",
                      tables.version.text, tables.version.nsys_version);
  report->input_units = "host ops from the export";
  report->notes.insert(
      report->notes.begin(),
      absl::StrFormat(
          "nsys: GPU %d of process %d: %d kernels, %d memcpys, %d memsets, "
          "%d runtime calls (%d outside every NVTX range, each its own host "
          "op), %d NVTX ranges as host ops, %d stream waits",
          g.device, g.pid, s.kernels, s.memcpys, s.memsets, s.runtime_calls,
          s.lone_runtime_ops, s.nvtx_ranges, s.stream_waits));
  if (s.nccl_kernels > 0) {
    report->warnings.push_back(absl::StrFormat(
        "nsys: %d of %d NCCL kernels have no message size in the export (no "
        "NCCL NVTX payload): size unknown, written as comm_size 0",
        s.nccl_size_unknown, s.nccl_kernels));
  }
  if (tables.open_nvtx_ranges > 0) {
    report->notes.push_back(absl::StrFormat(
        "nsys: %d NVTX ranges of the export have no end (the capture cut "
        "them) and are left out",
        tables.open_nvtx_ranges));
  }
}

}  // namespace

absl::StatusOr<bool> IsNsysExport(const std::string& path) {
  return nsys::IsSqliteFile(path);
}

absl::StatusOr<std::vector<RankResult>> ConvertNsysExport(
    const std::string& input, const std::string& output,
    const ConvertOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<nsys::NsysDatabase> db,
                   nsys::NsysDatabase::Open(input, options.force_schema));
  ASSIGN_OR_RETURN(nsys::NsysTables tables, nsys::ReadNsysTables(db.get()));
  db.reset();  // the inflated copy of a gzip export is not needed any more
  const std::vector<nsys::NsysGraphKey> graphs = nsys::ListNsysGraphs(tables);
  if (graphs.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the export has no kernels, memcpys or memsets: no GPU work to "
        "build a graph on",
        input));
  }
  if (static_cast<int64_t>(graphs.size()) > kMaxNsysGraphs) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: GPU work of %d (GPU, process) pairs, over the limit of %d graphs "
        "(output files) from one export",
        input, graphs.size(), kMaxNsysGraphs));
  }
  if (graphs.size() > 1 && !IsRankPattern(output)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the export has %d graphs (one per GPU and process): give an "
        "output pattern with %%d, e.g. 'out.%%d.et'",
        input, graphs.size()));
  }
  std::vector<RankResult> results;
  for (const nsys::NsysGraphKey& key : graphs) {
    nsys::NsysGraph g = nsys::BuildNsysGraph(tables, key);
    RankJob job{g.rank, input, ExpandRankPattern(output, g.rank), "", {}};
    RankResult r{job, StagingPath(job.output), absl::UnknownError("not run")};
    ConvertOptions o = options;
    o.rank = g.rank;
    o.world_size = static_cast<int>(graphs.size());
    o.show_progress = false;
    o.collectives_need_kernel = g.stats.nccl_kernels > 0;
    r.summary = ConvertKinetoTrace(g.trace, input, r.staged, o);
    g.trace.reset();
    if (r.summary.ok()) {
      r.summary->output_path = job.output;
      AddNotes(tables, g, &*r.summary);
    }
    results.push_back(std::move(r));
  }
  return results;
}

absl::StatusOr<ConvertReport> ConvertNsysToOne(const std::string& input,
                                               const std::string& output,
                                               const ConvertOptions& options) {
  ASSIGN_OR_RETURN(std::vector<RankResult> results,
                   ConvertNsysExport(input, output, options));
  ASSIGN_OR_RETURN(bool written, PublishRankOutputs(&results));
  for (const RankResult& r : results) {
    if (!r.summary.ok()) return r.summary.status();
  }
  if (!written || results.size() != 1) {
    return absl::InternalError(absl::StrFormat(
        "%s: %d graphs, none written to %s", input, results.size(), output));
  }
  return *results[0].summary;
}

}  // namespace et::convert
