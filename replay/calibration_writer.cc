// Calibration entries of a replay; see calibration_writer.h.
#include "replay/calibration_writer.h"

#include <map>
#include <utility>

#include "model/comm_type.h"

namespace et::replay {

std::vector<CalibrationEntry> CalibrationEntries(
    const NodeModel& model, const ReplayPlan& plan,
    const std::vector<IterationTiming>& timed) {
  std::map<std::pair<uint32_t, absl::string_view>, size_t> index;
  std::vector<CalibrationEntry> entries;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (op.kind == ReplayOpKind::kNone) continue;
    const absl::string_view shapes = model.input_shapes_key(op.node);
    auto [it, inserted] =
        index.try_emplace({op.name_id, shapes}, entries.size());
    if (inserted) {
      CalibrationEntry e;
      e.name = std::string(plan.name(op));
      e.shapes_key = std::string(shapes);
      for (const IoSlot& slot : model.inputs(op.node))
        e.input_types.emplace_back(DtypeName(slot.dtype));
      if (op.kind == ReplayOpKind::kCollective) {
        e.comm_type = std::string(CommTypeName(op.comm.type));
        e.comm_bytes = op.comm.bytes;
      }
      entries.push_back(std::move(e));
    }
    for (const IterationTiming& t : timed)
      entries[it->second].samples_ns.push_back(t.ops[i].duration_ns);
  }
  return entries;
}

std::string CalibrationJson(const NodeModel& model, const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            const std::string& device) {
  return et::CalibrationJson(CalibrationEntries(model, plan, timed), device);
}

absl::Status WriteCalibration(const std::string& path, const NodeModel& model,
                              const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              const std::string& device) {
  return et::WriteCalibration(path, CalibrationEntries(model, plan, timed),
                              device);
}

}  // namespace et::replay
