// One of our recorder's single-rank recordings in tests/data (files X_et,
// X_kineto and X_kineto_light of a folder), converted and simulated the way a
// user would: the fidelity tests of our own recordings share these.
#ifndef TESTS_FIDELITY_OWN_RECORDING_H_
#define TESTS_FIDELITY_OWN_RECORDING_H_

#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "simulator/simulation.h"
#include "step/host_profile.h"

namespace et::sim {

// Converts `model` of tests/data/`folder` with its Kineto trace and, with
// `light`, the host costs its light profile teaches stored in the .et
// (et-convert --host-profile). Returns the .et's path.
inline std::string ConvertOwnRecording(const std::string& folder,
                                       const std::string& model, bool light) {
  const std::string dir = std::string(ET_TEST_DATA) + "/" + folder + "/";
  const std::string out = std::string(ET_BINARY_DIR) + "/" + folder + "_" +
                          model + (light ? "_light" : "") + ".et";
  convert::ConvertOptions options;
  options.kineto_path = dir + model + "_kineto.json.gz";
  if (light) {
    auto learned = LearnHostProfile(dir + model + "_kineto_light.json.gz");
    EXPECT_TRUE(learned.ok()) << learned.status();
    if (learned.ok()) options.host_costs = learned->model;
  }
  auto s = convert::ConvertFile(dir + model + "_et.json.gz", out, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return out;
}

// et-sim on one rank's .et with `mode`'s host time.
inline Report SimulateOwnRecording(const std::string& path, HostTimeMode mode) {
  SimOptions options;
  options.host_time = mode;
  auto sim = Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report() : Report{};
}

}  // namespace et::sim

#endif  // TESTS_FIDELITY_OWN_RECORDING_H_
