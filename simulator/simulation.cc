// Input resolution, symmetry classes, and the run.
#include "simulator/simulation.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "simulator/comm_calibration.h"
#include "simulator/comm_fit.h"
#include "simulator/compute_cost_model.h"
#include "simulator/network.h"

namespace et::sim {

absl::StatusOr<std::vector<std::string>> ResolveRankFiles(
    const SimInput& input) {
  return ResolveRankPaths(input.path, input.pattern_ranks, ".et");
}

absl::Status Simulation::LoadFiles(const SimInput& input,
                                   const SimOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ResolveRankFiles(input));
  ASSIGN_OR_RETURN(ComputeCostModel compute, ComputeCostModel::Create(options));
  // Checked before anything is sized by it: a world of 2^62 once reached
  // vector::resize and aborted with std::length_error.
  if (options.world_size < 0 || options.world_size > kMaxRanks) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: --world %d: must be in [1, %d]", input.path,
                        options.world_size, kMaxRanks));
  }
  if (files.size() == 1) {
    world_size_ = options.world_size > 0 ? options.world_size : 1;
  } else {
    if (options.world_size > 0 &&
        options.world_size != static_cast<int64_t>(files.size())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: --world %d but %d per-rank files", input.path,
                          options.world_size, files.size()));
    }
    world_size_ = static_cast<int64_t>(files.size());
  }
  // The IO table is kept only for what reads it: calibration keys.
  ModelOptions model_options;
  model_options.keep_io = options.compute_model == ComputeModel::kCalibrated;
  for (const std::string& f : files) {
    absl::StatusOr<NodeModel> g = NodeModel::Load(f, model_options);
    if (!g.ok())
      return absl::Status(g.status().code(),
                          PrefixPath(f, g.status().message()));
    models_.push_back(std::make_unique<NodeModel>(std::move(*g)));
    absl::StatusOr<RankProgram> p =
        CompileRankProgram(*models_.back(), options, compute);
    if (!p.ok())
      return absl::Status(p.status().code(),
                          PrefixPath(f, p.status().message()));
    programs_.push_back(std::make_unique<RankProgram>(std::move(*p)));
    files_.push_back(f);
  }
  program_of_rank_.resize(world_size_);
  for (int64_t r = 0; r < world_size_; ++r) {
    program_of_rank_[r] = files.size() == 1 ? 0 : static_cast<int32_t>(r);
  }
  return absl::OkStatus();
}

absl::Status Simulation::BuildClasses(const SimOptions& options) {
  for (const auto& [rank, factor] : options.rank_slowdown) {
    if (rank < 0 || rank >= world_size_ || !(factor > 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--slow-rank %d:%g: rank must be in [0, %d) and factor positive",
          rank, factor, world_size_));
    }
  }
  // (program, slowdown) -> class; with symmetry off every rank is its own
  // class.
  std::map<std::pair<int32_t, double>, size_t> index;
  for (int64_t r = 0; r < world_size_; ++r) {
    auto it = options.rank_slowdown.find(r);
    const double slow = it == options.rank_slowdown.end() ? 1.0 : it->second;
    const int32_t prog = program_of_rank_[r];
    if (!options.use_rank_symmetry) {
      classes_.push_back({programs_[prog].get(), {r}, slow});
      continue;
    }
    auto [pos, inserted] =
        index.emplace(std::make_pair(prog, slow), classes_.size());
    if (inserted) classes_.push_back({programs_[prog].get(), {}, slow});
    classes_[pos->second].ranks.push_back(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Simulation>> Simulation::Run(
    const SimInput& input, const SimOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Simulation> sim, Load(input, options));
  RETURN_IF_ERROR(sim->Simulate(options));
  return sim;
}

absl::StatusOr<std::unique_ptr<Simulation>> Simulation::Load(
    const SimInput& input, const SimOptions& options) {
  auto sim = std::unique_ptr<Simulation>(new Simulation());
  RETURN_IF_ERROR(sim->LoadFiles(input, options));
  return sim;
}

absl::Status Simulation::Simulate(const SimOptions& options) {
  Simulation* sim = this;
  RETURN_IF_ERROR(sim->BuildClasses(options));
  CommEnvironment comm;
  // The ASTRA-sim modes keep their HGX-H100 default; the others follow the
  // recorded GPU.
  const bool astra = options.comm_model == CommModel::kAstra ||
                     options.comm_model == CommModel::kAstraAware;
  ASSIGN_OR_RETURN(
      Network network,
      ResolveNetwork(options.topology, sim->models_[0]->info().device_name,
                     !astra, sim->world_size_));
  std::string fit_note;
  if (!options.comm_from.empty()) {
    ASSIGN_OR_RETURN(fit_note,
                     FitPlatformToLogs(options.comm_from, &network.platform));
  }
  if (options.comm_model == CommModel::kCalibrated) {
    std::vector<const RankProgram*> programs;
    for (const auto& p : sim->programs_) programs.push_back(p.get());
    ASSIGN_OR_RETURN(std::string line,
                     CalibratePlatformToTrace(programs, sim->world_size_,
                                              &network.platform));
    fit_note = fit_note.empty() ? line : fit_note + "; then " + line;
  }
  comm.topology = std::move(network.topology);
  comm.platform = network.platform;
  if (options.comm_model == CommModel::kAstra ||
      options.comm_model == CommModel::kAstraAware) {
    if (options.astra_system.empty()) {
      return absl::InvalidArgumentError(
          "--comm=astra needs --astra-system FILE");
    }
    ASSIGN_OR_RETURN(comm.astra, LoadAstraSystemConfig(options.astra_system));
  }
  ASSIGN_OR_RETURN(sim->result_, RunSimulation(sim->classes_, sim->world_size_,
                                               options, comm));
  sim->report_ = BuildReport(sim->classes_, sim->result_, sim->world_size_);
  sim->report_.topology = network.name;
  sim->report_.topology_reason = network.reason;
  if (!fit_note.empty()) sim->report_.notes.push_back(fit_note);
  return absl::OkStatus();
}

}  // namespace et::sim
