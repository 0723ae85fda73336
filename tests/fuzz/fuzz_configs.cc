// libFuzzer target: the small config readers of et-sim: topology YAML/JSON,
// ASTRA system JSON, device presets, calibration files, process-group
// tables, platform files and nccl-tests logs. The first byte picks the
// reader; the rest is the text.
#include <cstdint>
#include <string>

#include "fuzz_input_file.h"
#include "model/process_group.h"
#include "simulator/calibration/nccl_tests_log.h"
#include "simulator/comm/astra_compat.h"
#include "simulator/platform/compute_cost_model.h"
#include "simulator/platform/platform.h"
#include "simulator/platform/topology.h"
#include "step/calibration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0: {
      auto t = et::sim::ParseTopology(text, "fuzz.yml");
      if (t.ok()) (void)et::sim::FitTopology(*t, 8);
      break;
    }
    case 1:
      (void)et::sim::ParseAstraSystemJson(text, "fuzz.json");
      break;
    case 2:
      (void)et::sim::LoadDeviceProfile(
          et::fuzz::WriteFuzzInput(data + 1, size - 1, ".dev.json"), "H100");
      break;
    case 3:
      (void)et::LoadCalibration(
          et::fuzz::WriteFuzzInput(data + 1, size - 1, ".cal.json"));
      break;
    case 4:
      (void)et::ParseProcessGroupJson(text);
      break;
    case 5:
      (void)et::sim::ParsePlatform(text, "fuzz.yaml");
      break;
    default:
      (void)et::sim::ParseNcclTestsLog(text, "fuzz.log");
      break;
  }
  return 0;
}
