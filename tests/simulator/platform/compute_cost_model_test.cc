// Compute costs: recorded durations, roofline on device presets, FLOPs from
// shapes, calibration files.
#include "simulator/platform/compute_cost_model.h"

#include <cstdio>
#include <fstream>
#include <limits>

#include "gtest/gtest.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et::sim {
namespace {

// The model's cost of one node, decoded as a tool loads it (IO kept, for
// calibration keys).
int64_t Duration(const ComputeCostModel& m, const ChakraProtoMsg::Node& n) {
  const NodeModel model =
      NodeModel::FromGraph(Graph::Build(ChakraProtoMsg::GlobalMetadata(), {n}));
  return m.DurationNs(model, 0);
}

ChakraProtoMsg::Node Mm(int64_t dur_us) {
  ChakraProtoMsg::Node n;
  n.set_id(1);
  n.set_name("aten::mm");
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(dur_us);
  n.mutable_inputs()->set_shapes("[[1024, 2048], [2048, 512]]");
  return n;
}

TEST(ComputeCostModelTest,
     RooflineDerivesFlopsFromShapesWhenAttributesAreMissing) {
  SimOptions o;
  o.compute_model = ComputeModel::kRoofline;
  auto m = ComputeCostModel::Create(o);
  ASSERT_TRUE(m.ok()) << m.status();
  ChakraProtoMsg::Node n = Mm(0);
  n.mutable_inputs()->set_types("[\"Tensor(float)\", \"Tensor(float)\"]");
  n.mutable_outputs()->set_shapes("[[1024, 512]]");
  n.mutable_outputs()->set_types("[\"Tensor(float)\"]");
  const double flops =
      2.0 * 1024 * 2048 * 512;  // no num_ops attribute: from shapes
  const double bytes = 4.0 * (1024 * 2048 + 2048 * 512 + 1024 * 512);
  const double expected = std::max(flops / m->device().peak_flops_per_ns,
                                   bytes / m->device().mem_bytes_per_ns);
  EXPECT_NEAR(Duration(*m, n), expected, 1.0);
  // Python-repr shapes and types, as Chakra's reference converter writes them,
  // work too.
  n.mutable_inputs()->set_types("['Tensor(float)', 'Tensor(float)']");
  n.mutable_outputs()->set_types("['Tensor(float)']");
  EXPECT_NEAR(Duration(*m, n), expected, 1.0);
}

TEST(ComputeCostModelTest, RecordedPrefersNanoseconds) {
  SimOptions o;
  auto m = ComputeCostModel::Create(o);
  ASSERT_TRUE(m.ok()) << m.status();
  ChakraProtoMsg::Node n = Mm(12);
  EXPECT_EQ(Duration(*m, n), 12000);
  SetInt64(n.mutable_attr(), attr::kDurationNs, 12345);
  EXPECT_EQ(Duration(*m, n), 12345);
}

TEST(ComputeCostModelTest, RooflineOnPresets) {
  SimOptions o;
  o.compute_model = ComputeModel::kRoofline;
  o.device = "A100";
  auto a100 = ComputeCostModel::Create(o);
  ASSERT_TRUE(a100.ok()) << a100.status();
  // 2*1024*2048*512 = 2.147e9 FLOP at 312 TFLOP/s * 0.7 = 218400 FLOP/ns ->
  // 9833 ns.
  EXPECT_EQ(Duration(*a100, Mm(999)), 9833);
  o.device = "H100";
  auto h100 = ComputeCostModel::Create(o);
  ASSERT_TRUE(h100.ok());
  EXPECT_LT(Duration(*h100, Mm(999)), Duration(*a100, Mm(999)));
  // Memory-bound: 1 GB at 3350 GB/s * 0.8 = 2680 B/ns -> 373135 ns.
  ChakraProtoMsg::Node copy;
  copy.set_name("aten::copy_");
  SetInt64(copy.mutable_attr(), attr::kTensorSize, 1000000000);
  EXPECT_EQ(Duration(*h100, copy), 373135);
  o.device = "TPU";
  EXPECT_FALSE(ComputeCostModel::Create(o).ok());
}

TEST(ComputeCostModelTest, CalibrationFileByNameAndShapes) {
  const std::string path =
      std::string(ET_BINARY_DIR) + "/sim_calibration_test.json";
  std::ofstream(path)
      << R"({"format": "et-calibration", "version": 1, "device": "H100",
    "entries": [{"name": "aten::mm", "input_shapes": [[1024, 2048], [2048, 512]],
                 "mean_us": 7.5, "count": 20}]})";
  SimOptions o;
  o.compute_model = ComputeModel::kCalibrated;
  o.calibration_file = path;
  auto m = ComputeCostModel::Create(o);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(Duration(*m, Mm(999)), 7500);
  ChakraProtoMsg::Node other = Mm(999);
  other.mutable_inputs()->set_shapes(
      "[[8, 8], [8, 8]]");            // not calibrated: roofline
  EXPECT_EQ(Duration(*m, other), 1);  // 1024 FLOP / 692300 FLOP/ns, rounded up
  std::remove(path.c_str());
}

// Calibration and device files of the wrong shape: nlohmann's get<>() and
// value() throw on a type mismatch, and an escaped exception is SIGABRT. Each
// must be an error naming the file.
TEST(ComputeCostModelTest, WrongTypesInCalibrationAndDeviceFilesAreErrors) {
  const std::string path = std::string(ET_BINARY_DIR) + "/sim_bad_types.json";
  const char* const calibrations[] = {
      R"({"format": "et-calibration", "entries": [{"name": 5, "mean_us": 1}]})",
      R"({"format": 7, "entries": []})",
      R"([{"format": "et-calibration"}])",
      R"({"format": "et-calibration", "entries": [3]})",
      R"({"format": "et-calibration", "entries": [{"name": "x",
          "mean_us": -1}]})",
      R"({"format": "et-calibration", "entries": [{"name": "x",
          "mean_us": 1e300}]})",
  };
  for (const char* text : calibrations) {
    std::ofstream(path) << text;
    SimOptions o;
    o.compute_model = ComputeModel::kCalibrated;
    o.calibration_file = path;
    auto m = ComputeCostModel::Create(o);
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_NE(m.status().message().find(path), std::string::npos) << text;
  }
  const char* const devices[] = {
      R"({"devices": {"x": {"peak_tflops": "fast", "mem_bw_gbps": 1}}})",
      R"({"devices": {"x": 3}})",
      R"({"devices": [1, 2]})",
      R"([1])",
      R"({"devices": {"x": {"peak_tflops": 1, "mem_bw_gbps": 1,
          "mem_efficiency": "all"}}})",
  };
  for (const char* text : devices) {
    std::ofstream(path) << text;
    SimOptions o;
    o.device = "x";
    o.device_file = path;
    auto m = ComputeCostModel::Create(o);
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_NE(m.status().message().find(path), std::string::npos) << text;
  }
  std::remove(path.c_str());
}

// A duration_micros near 2^64 must not wrap into a small or negative time.
TEST(ComputeCostModelTest, HugeRecordedDurationSaturates) {
  auto m = ComputeCostModel::Create(SimOptions{});
  ASSERT_TRUE(m.ok()) << m.status();
  ChakraProtoMsg::Node n = Mm(0);
  n.set_duration_micros(~uint64_t{0});
  // The model clamps recorded times at a quarter of int64's range, so that
  // sums of a few of them cannot overflow either.
  EXPECT_EQ(Duration(*m, n), std::numeric_limits<int64_t>::max() / 4);
}

}  // namespace
}  // namespace et::sim
