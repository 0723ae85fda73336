// The calibration file, the one contract between et-replay (which measures
// ops) and et-sim (which looks their times up): format "et-calibration"
// version 1, docs/calibration-format.md. Entries are keyed by op name and the
// canonical text of the input shapes (NodeModel::input_shapes_key), built here
// and nowhere else, so a key the writer made is the key the reader finds.
// Reading never throws: a file of the wrong shape is a one-line error.
#ifndef STEP_CALIBRATION_H_
#define STEP_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et {

// name + "|" + canonical input shapes ("aten::mm|[[64,32],[32,16]]").
std::string CalibrationKey(absl::string_view name,
                           absl::string_view shapes_key);

// One group of measured ops: the same name and input shapes.
struct CalibrationEntry {
  std::string name;
  std::string shapes_key;                // NodeModel::input_shapes_key
  std::vector<std::string> input_types;  // dtype per input (informational)
  std::vector<int64_t> samples_ns;       // every timed sample
  std::string comm_type;                 // collectives: "ALL_REDUCE", ...
  int64_t comm_bytes = 0;
};

// The file's text: entries sorted by (name, shapes) for a deterministic file;
// entries without samples are left out.
std::string CalibrationJson(std::vector<CalibrationEntry> entries,
                            const std::string& device);
absl::Status WriteCalibration(const std::string& path,
                              std::vector<CalibrationEntry> entries,
                              const std::string& device);

// CalibrationKey -> measured mean in ns.
using CalibrationTable = absl::flat_hash_map<std::string, double>;
absl::StatusOr<CalibrationTable> LoadCalibration(const std::string& path);

}  // namespace et

#endif  // STEP_CALIBRATION_H_
