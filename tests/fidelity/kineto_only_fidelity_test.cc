// et-sim on graphs made from a Kineto trace alone (no execution trace) of the
// five H100 models, full and light traces (docs/benchmarks.md has the table):
// the default prediction within 10% of the step measured without a profiler,
// and `--host-time recorded` within 5% of the profiled step. et-sim is
// deterministic, so these are error bounds, not timings.
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

// tests/data/h100 has the small models; the others are read from ../shared.
std::string PathOf(const std::string& file) {
  const std::string local = std::string(ET_TEST_DATA) + "/h100/" + file;
  if (std::filesystem::exists(local)) return local;
  return std::string(ET_SHARED_TRACES) + "/h100/" + file;
}

double TrueStepMs(const std::string& model) {
  std::ifstream in(PathOf(model + "_meta.json"));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_discarded() ? 0.0 : j.value("unprofiled_step_ms", 0.0);
}

StepReport Simulate(const std::string& path, SimOptions options) {
  auto sim = Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report().step : StepReport{};
}

class KinetoOnlyFidelity
    : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(KinetoOnlyFidelity, PredictsTheTrueAndTheProfiledStep) {
  const auto& [model, kind] = GetParam();
  const std::string trace = PathOf(model + "_" + kind + ".json.gz");
  const double true_ms = TrueStepMs(model);
  if (true_ms <= 0 || !std::filesystem::exists(trace))
    GTEST_SKIP() << model << ": no trace here";
  const std::string et =
      std::string(ET_BINARY_DIR) + "/kineto_only_" + model + "_" + kind + ".et";
  convert::ConvertOptions options;
  options.measured_step_ms = true_ms;
  auto converted = convert::ConvertFile(trace, et, options);
  ASSERT_TRUE(converted.ok()) << converted.status();
  EXPECT_EQ(converted->kineto_host_ops_matched, converted->kineto_host_ops);

  const StepReport unprofiled = Simulate(et, SimOptions());
  EXPECT_EQ(unprofiled.steps, 3);
  ASSERT_TRUE(unprofiled.error_pct.has_value());
  EXPECT_LE(std::abs(*unprofiled.error_pct), 10.0)
      << model << " " << kind << ": predicted " << unprofiled.predicted_us
      << " us vs " << true_ms * 1e3;

  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  const StepReport profiled = Simulate(et, recorded);
  EXPECT_EQ(profiled.measured_source, "profiled-run");
  ASSERT_TRUE(profiled.error_pct.has_value());
  EXPECT_LE(std::abs(*profiled.error_pct), 5.0)
      << model << " " << kind << ": predicted " << profiled.predicted_us
      << " us vs " << profiled.measured_us.value_or(0);
}

INSTANTIATE_TEST_SUITE_P(
    Models, KinetoOnlyFidelity,
    testing::Combine(testing::Values("mlp1024", "mlp4096", "gpt1024",
                                     "resnet50", "gpt2"),
                     testing::Values("kineto", "kineto_light")));

}  // namespace
}  // namespace et::sim
