// Pre-simulation input checks; see input_checks.h.
#include "simulator/input_checks.h"

#include <sys/stat.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/input_limits.h"
#include "base/rank_files.h"
#include "base/status_macros.h"

namespace et::sim {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

InputFacts FactsOf(const NodeModel& model, const std::string& path) {
  InputFacts facts;
  facts.path = path;
  facts.recorded_world_size = model.info().world_size;
  facts.gpu_job = model.info().gpu_job;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (model.type(i) == ChakraProtoMsg::COMP_NODE && !model.on_host(i))
      ++facts.device_nodes;
    switch (model.type(i)) {
      case ChakraProtoMsg::COMP_NODE:
        ++facts.compute_nodes;
        if (model.duration_ns(i) > 0) ++facts.compute_nodes_timed;
        break;
      case ChakraProtoMsg::COMM_COLL_NODE:
      case ChakraProtoMsg::COMM_SEND_NODE:
      case ChakraProtoMsg::COMM_RECV_NODE: {
        ++facts.comm_nodes;
        const CommSpec* c = model.comm(i);
        if (c != nullptr && c->pg_name != 0) {
          facts.pg_names.insert(std::string(model.string(c->pg_name)));
        } else {
          ++facts.comm_nodes_without_group;
        }
        break;
      }
      default:
        break;
    }
  }
  return facts;
}

absl::StatusOr<InputFacts> ScanRankFile(const std::string& path) {
  ModelOptions options;
  options.keep_io = false;
  ASSIGN_OR_RETURN(NodeModel model, NodeModel::Load(path, options));
  return FactsOf(model, path);
}

absl::Status CheckRankCount(const std::string& pattern, int64_t ranks,
                            const InputFacts& rank0, bool groups_given) {
  if (groups_given || ranks <= 0) return absl::OkStatus();
  // The recorded world size, else the files that follow the last one used.
  int64_t total = rank0.recorded_world_size;
  std::string evidence = "world_size in " + rank0.path;
  // Only a rank pattern names other ranks' files: a plain file or a folder
  // expands to itself, and probing it would never end.
  if (total <= ranks && IsRankPattern(pattern)) {
    total = ranks;
    while (total < kMaxRanks && Exists(ExpandRankPattern(pattern, total)))
      ++total;
    evidence = ExpandRankPattern(pattern, total - 1) + " exists";
  }
  if (total <= ranks) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--ranks %d: the traces are of %d ranks (%s); simulating %d of them "
      "would leave the others' collectives unmatched: pass --ranks %d (or "
      "--groups with a table for %d ranks)",
      ranks, total, evidence, ranks, total, ranks));
}

absl::Status CheckGroupsApply(const std::vector<ProcessGroup>& groups,
                              const std::string& groups_path,
                              const InputFacts& rank0) {
  if (groups.empty()) return absl::OkStatus();
  if (rank0.pg_names.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--groups %s: no communication node of %s names a process group "
        "(pg_name), and the table applies by that name: it would change "
        "nothing; every collective runs over all ranks",
        groups_path, rank0.path));
  }
  std::vector<std::string> table_names;
  for (const ProcessGroup& g : groups) {
    if (rank0.pg_names.count(g.name)) return absl::OkStatus();
    table_names.push_back(g.name);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--groups %s: none of its groups (%s) is named by a collective of %s "
      "(they name %s), so the table would change nothing: name the groups "
      "as the trace does",
      groups_path, absl::StrJoin(table_names, ", "), rank0.path,
      absl::StrJoin(rank0.pg_names, ", ")));
}

std::string GroupsNote(const std::vector<ProcessGroup>& groups,
                       const InputFacts& rank0) {
  if (groups.empty() || rank0.comm_nodes_without_group == 0 ||
      rank0.comm_nodes_without_group == rank0.comm_nodes) {
    return "";  // nothing applies, or all of it: CheckGroupsApply's business
  }
  return absl::StrFormat(
      "--groups: %d of %d communication nodes of %s name no process group "
      "(pg_name): the table does not apply to them; they span all ranks",
      rank0.comm_nodes_without_group, rank0.comm_nodes, rank0.path);
}

std::string DurationsNote(const InputFacts& rank0, const SimOptions& options,
                          const std::string& device) {
  if (options.compute_model != ComputeModel::kRecorded) return "";
  const int64_t untimed = rank0.compute_nodes - rank0.compute_nodes_timed;
  if (untimed <= 0) return "";
  if (AstraReplay(options)) {
    return absl::StrFormat(
        "%d of %d compute nodes of %s have no recorded duration: 1 ns each, "
        "as ASTRA-sim gives them with its roofline off (--schedule astra; "
        "--compute roofline for the roofline model)",
        untimed, rank0.compute_nodes, rank0.path);
  }
  // A CPU-only trace's host ops get a GPU's roofline too: say that it is one,
  // not the CPU that ran them.
  const std::string model = absl::StrFormat(
      "the roofline model on %s (num_ops / peak FLOP/s, tensor_size / memory "
      "bandwidth; 0 for ops without either)%s",
      options.device.empty() ? device + " (no --device)" : options.device,
      rank0.device_nodes > 0 ? ""
      : rank0.gpu_job
          ? ", the op as a whole on a GPU (a GPU job's ET: its tensors are "
            "on cuda; without its Kineto trace it records no GPU ops)"
          : ", a GPU's, though this trace ran on a CPU only: no measure of "
            "its CPU");
  if (rank0.compute_nodes_timed == 0) {
    return absl::StrFormat(
        "%s has no recorded durations (converted without --kineto?): compute "
        "times of its %d compute nodes come from %s; convert with the Kineto "
        "trace, or pass --calibration, for measured times",
        rank0.path, rank0.compute_nodes, model);
  }
  return absl::StrFormat(
      "%d of %d compute nodes of %s have no recorded duration: theirs come "
      "from %s",
      untimed, rank0.compute_nodes, rank0.path, model);
}

}  // namespace et::sim
