// See rank_job_writer.h.
#include "scaleout/rank_job_writer.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/atomic_output_file.h"
#include "base/checked_math.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "model/comm_type.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"
#include "scaleout/staged_folder.h"

namespace et::scaleout {
namespace {

using ChakraProtoMsg::Node;

std::string RankFileName(const RankJobSpec& spec, int64_t rank) {
  return absl::StrCat(spec.stem, ".", rank, ".et");
}

std::string CommGroupsFileName(const RankJobSpec& spec) {
  return absl::StrCat(spec.stem, ".comm_groups.json");
}

absl::Status CheckSpec(const RankJobSpec& spec) {
  if (spec.world_size < 1 || spec.world_size > kMaxRanks) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec.dir, ": a job of ", spec.world_size,
                     " ranks (expected 1 to ", kMaxRanks, ")"));
  }
  if (spec.stem.empty() || spec.stem.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.dir, ": file stem '", spec.stem, "' is empty or has a '/'"));
  }
  // ASTRA-sim ignores a --comm-group-configuration whose path contains
  // "empty" (its "no file" default): the groups would silently be lost.
  if (JoinPath(spec.dir, spec.stem).find("empty") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.dir, "/", spec.stem,
        ": ASTRA-sim ignores a comm-group file whose path contains 'empty'"));
  }
  return absl::OkStatus();
}

// Collects the comm groups the ranks' collectives use, checking what ASTRA-sim
// needs of them (see WriteRankJob's comment).
class CommGroupTable {
 public:
  explicit CommGroupTable(int64_t world_size) : world_size_(world_size) {}

  // The rank's table, from its metadata; then each of its nodes.
  void BeginRank(const ChakraProtoMsg::GlobalMetadata& metadata) {
    rank_groups_ = DecodeProcessGroups(metadata.attr());
    by_name_.clear();
    for (const ProcessGroup& g : rank_groups_) by_name_.emplace(g.name, &g);
  }
  absl::Status AddNode(int64_t rank, const Node& node) {
    if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) return absl::OkStatus();
    ++collectives_;
    const std::string name = GetString(node, attr::kPgName).value_or("");
    auto it = by_name_.find(name);
    return AddUse(rank, node, name,
                  it == by_name_.end() ? nullptr : it->second);
  }

  const std::map<int64_t, std::vector<int64_t>>& groups() const {
    return groups_;
  }
  int64_t collectives() const { return collectives_; }
  const std::string& double_free() const { return double_free_; }

 private:
  absl::Status AddUse(int64_t rank, const Node& node, const std::string& name,
                      const ProcessGroup* group) {
    const std::string where =
        absl::StrCat("rank ", rank, " node ", node.id(), " (", node.name(),
                     "): collective in group '", name, "'");
    std::vector<int64_t> members;
    if (group == nullptr && !name.empty() && name != "0") {
      return absl::FailedPreconditionError(
          absl::StrCat(where, ": no such group in the rank's table"));
    }
    if (group != nullptr && !group->ranks.empty()) {
      members = group->ranks;
      std::sort(members.begin(), members.end());
    } else {
      members.resize(world_size_);
      std::iota(members.begin(), members.end(), 0);
    }
    if (members.size() < 2) {
      return absl::FailedPreconditionError(absl::StrCat(
          where, ": a group of one rank (ASTRA-sim never finishes it)"));
    }
    if (!std::binary_search(members.begin(), members.end(), rank) ||
        members.front() < 0 || members.back() >= world_size_) {
      return absl::FailedPreconditionError(absl::StrCat(
          where, ": ranks [", absl::StrJoin(members, ","),
          "] do not hold this rank or leave the world of ", world_size_));
    }
    const bool whole_world =
        static_cast<int64_t>(members.size()) == world_size_;
    if (name.empty() || name == "0") {
      if (!whole_world) {
        return absl::FailedPreconditionError(absl::StrCat(
            where, ": ASTRA-sim takes group '0' as every rank, this one has ",
            members.size(), " of ", world_size_));
      }
      return absl::OkStatus();
    }
    int64_t id = 0;
    if (!absl::SimpleAtoi(name, &id) || id <= 0 || id > INT32_MAX) {
      return absl::FailedPreconditionError(absl::StrCat(
          where, ": ASTRA-sim names groups by positive integer ids"));
    }
    auto [it, inserted] = groups_.emplace(id, members);
    if (!inserted && it->second != members) {
      return absl::FailedPreconditionError(absl::StrCat(
          where, " has ranks [", absl::StrJoin(members, ","),
          "], another rank's has [", absl::StrJoin(it->second, ","),
          "]: ASTRA-sim has one group table for every rank"));
    }
    NoteSharedImplementation(rank, node, id);
    return absl::OkStatus();
  }

  // ASTRA-sim (518bd51) frees a collective implementation once per sub-world
  // group that used it: a rank running one collective type in two such groups
  // aborts it at exit (docs/astra-sim.md). Keeps the first such rank.
  void NoteSharedImplementation(int64_t rank, const Node& node, int64_t id) {
    if (!double_free_.empty()) return;
    const int64_t type = GetInt(node, attr::kCommType).value_or(-1);
    std::set<int64_t>& ids = used_[{rank, type}];
    ids.insert(id);
    if (ids.size() == 2) {
      double_free_ = absl::StrCat(
          "rank ", rank, " runs ",
          ChakraProtoMsg::CollectiveCommType_IsValid(type)
              ? CommTypeName(
                    static_cast<ChakraProtoMsg::CollectiveCommType>(type))
              : "one collective type",
          " in groups ", absl::StrJoin(ids, " and "));
    }
  }

  int64_t world_size_;
  std::vector<ProcessGroup> rank_groups_;  // the rank being added
  absl::flat_hash_map<std::string, const ProcessGroup*> by_name_;
  std::map<int64_t, std::vector<int64_t>> groups_;
  int64_t collectives_ = 0;
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> used_;
  std::string double_free_;
};

// Writes one rank's file as it streams by, checking its collectives' groups.
class RankFileSink : public RankSink {
 public:
  RankFileSink(std::string path, int64_t rank, int64_t world_size,
               CommGroupTable* groups)
      : path_(std::move(path)),
        rank_(rank),
        world_size_(world_size),
        groups_(groups) {}

  absl::Status Begin(const ChakraProtoMsg::GlobalMetadata& recorded) override {
    ChakraProtoMsg::GlobalMetadata metadata = recorded;
    // The measured steps the graph carries are of the recorded job, not of
    // this one: said, so that et-sim on these files reports no error against
    // them (a truth of another scale).
    const auto& attrs = metadata.attr();
    const int64_t measured_world =
        GetInt(attrs, attr::kMeasuredWorldSize)
            .value_or(GetInt(attrs, attr::kWorldSize).value_or(0));
    SetInt64(metadata.mutable_attr(), attr::kMeasuredWorldSize, measured_world);
    // The recorder's memory truths are of a recorded rank; a rank of this
    // job holds its own shards and stashes: no peak to compare with.
    auto* list = metadata.mutable_attr();
    for (int k = list->size() - 1; k >= 0; --k) {
      const std::string& name = list->Get(k).name();
      if (name == attr::kUnprofiledPeakBytes ||
          name == attr::kUnprofiledStartBytes)
        list->DeleteSubrange(k, 1);
    }
    SetInt64(metadata.mutable_attr(), attr::kRank, rank_);
    SetInt64(metadata.mutable_attr(), attr::kWorldSize, world_size_);
    groups_->BeginRank(recorded);
    ASSIGN_OR_RETURN(writer_, EtWriter::Open(path_));
    // A stream's length is not known here: the recorded file's count is
    // dropped rather than announced for a graph of another length.
    return writer_->WriteMetadata(metadata, std::nullopt);
  }

  absl::Status Add(const Node& node) override {
    if (writer_ == nullptr)
      return absl::InternalError("a node streamed before its metadata");
    if (absl::Status s = groups_->AddNode(rank_, node); !s.ok()) {
      group_error_ = s;
      return s;
    }
    ++nodes_;
    return writer_->WriteNode(node);
  }

  absl::Status Close() {
    if (writer_ == nullptr)
      return absl::InternalError("the rank's source wrote no metadata");
    return writer_->Close();
  }
  // The group check's error, apart from the source's own.
  const absl::Status& group_error() const { return group_error_; }
  int64_t nodes() const { return nodes_; }

 private:
  std::string path_;
  int64_t rank_, world_size_;
  CommGroupTable* groups_;
  std::unique_ptr<EtWriter> writer_;
  absl::Status group_error_;
  int64_t nodes_ = 0;
};

std::string CommGroupsJson(
    const std::map<int64_t, std::vector<int64_t>>& groups) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [id, ranks] : groups) j[std::to_string(id)] = ranks;
  return j.dump(2) + "\n";
}

}  // namespace

std::string WorkloadConfiguration(const RankJobSpec& spec) {
  return JoinPath(spec.dir, spec.stem);
}

absl::Status StreamGraph(const Graph& graph, RankSink* sink) {
  RETURN_IF_ERROR(sink->Begin(graph.metadata()));
  for (const Node& node : graph.nodes()) RETURN_IF_ERROR(sink->Add(node));
  return absl::OkStatus();
}

absl::StatusOr<RankJobResult> WriteRankJob(const RankJobSpec& spec,
                                           const RankGraphSource& source) {
  return WriteRankJob(
      spec, RankStreamSource([&source](int64_t rank, RankSink* sink) {
        absl::StatusOr<std::shared_ptr<const Graph>> graph = source(rank);
        if (!graph.ok()) return graph.status();
        return StreamGraph(**graph, sink);
      }));
}

absl::StatusOr<RankJobResult> WriteRankJob(const RankJobSpec& spec,
                                           const RankStreamSource& source) {
  RETURN_IF_ERROR(CheckSpec(spec));
  ASSIGN_OR_RETURN(std::unique_ptr<StagedFolder> folder,
                   StagedFolder::Create(spec.dir));
  RankJobResult result;
  CommGroupTable groups(spec.world_size);
  int64_t job_bytes = 0;
  for (int64_t rank = 0; rank < spec.world_size; ++rank) {
    const std::string name = RankFileName(spec, rank);
    RankFileSink sink(folder->StagingFile(name), rank, spec.world_size,
                      &groups);
    absl::Status s = source(rank, &sink);
    if (!sink.group_error().ok()) {
      s = sink.group_error();
      return absl::Status(s.code(), absl::StrCat(spec.dir, ": ", s.message()));
    }
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat(spec.dir, ": rank ", rank, ": ", s.message()));
    }
    RETURN_IF_ERROR(sink.Close());
    // Stopped as soon as the job is sure to pass the limit: rank 0's size
    // times the world, then the running total.
    struct stat st;
    if (stat(folder->StagingFile(name).c_str(), &st) == 0) {
      job_bytes += st.st_size;
      const int64_t expected =
          rank == 0 ? SaturatingMul(int64_t{st.st_size}, spec.world_size)
                    : job_bytes;
      if (expected > kMaxJobBytes) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "%s: %d ranks of ~%d bytes make a job over the %d GiB limit on a "
            "job's files (ASTRA-sim holds every rank's graph in memory)",
            spec.dir, spec.world_size, st.st_size, kMaxJobBytes >> 30));
      }
    }
    result.nodes += sink.nodes();
    result.rank_paths.push_back(JoinPath(spec.dir, name));
  }
  result.collectives = groups.collectives();
  result.astra_teardown_abort = groups.double_free();
  result.comm_groups = groups.groups();
  if (!result.comm_groups.empty()) {
    RETURN_IF_ERROR(
        WriteFileAtomically(folder->StagingFile(CommGroupsFileName(spec)),
                            CommGroupsJson(result.comm_groups)));
    result.comm_groups_path = JoinPath(spec.dir, CommGroupsFileName(spec));
  }
  RETURN_IF_ERROR(folder->Commit());
  return result;
}

}  // namespace et::scaleout
