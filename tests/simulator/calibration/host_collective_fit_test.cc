// The host collective model's fit
// (simulator/calibration/host_collective_fit.h): rows a host of known bandwidth
// and step latency would measure give those figures back; rows of one shape
// keep the latency; bounds hold.
#include "simulator/calibration/host_collective_fit.h"

#include <vector>

#include "gtest/gtest.h"
#include "simulator/comm/host_collective_model.h"
#include "simulator/platform/platform.h"

namespace et::sim {
namespace {

Platform HostGloo() {
  Platform p;
  p.host_backend = true;
  p.intra_gbps = 0.7;
  p.intra_efficiency = 1;
  p.net_hop_us = 200;
  p.launch_us = 0;
  return p;
}

// What a host with `gbps` and `hop_us` takes for `bytes` over `ranks`.
NcclTestsLogRow Measured(NcclOp op, int64_t ranks, int64_t bytes, double gbps,
                         double hop_us) {
  Platform truth = HostGloo();
  truth.intra_gbps = gbps;
  truth.net_hop_us = hop_us;
  return {op, ranks, bytes,
          HostCollectiveUs(truth, op, ranks, static_cast<double>(bytes))};
}

TEST(HostCollectiveFitTest, RowsOfTwoShapesGiveBandwidthAndStepLatencyBack) {
  const std::vector<NcclTestsLogRow> rows = {
      Measured(NcclOp::kAllReduce, 4, 1 << 20, 1.8, 150),
      Measured(NcclOp::kAllReduce, 4, 5 << 20, 1.8, 150),
      Measured(NcclOp::kAllReduce, 2, 64, 1.8, 150),
  };
  const HostCollectiveFit fit = FitHostCollectives(HostGloo(), rows);
  EXPECT_TRUE(fit.hop_fitted);
  EXPECT_NEAR(fit.platform.intra_gbps, 1.8, 0.01);
  EXPECT_NEAR(fit.platform.net_hop_us, 150, 0.5);
  EXPECT_EQ(fit.platform.intra_efficiency, 1);
  EXPECT_GT(fit.median_error_before, 0.3);
  EXPECT_LT(fit.median_error_after, 1e-6);
  const std::string line = DescribeHostFit(HostGloo(), fit, rows.size(), "X");
  EXPECT_NE(line.find("bandwidth 0.7 -> 1.8 GB/s"), std::string::npos) << line;
  EXPECT_NE(line.find("per ring step 200 -> 150 us"), std::string::npos)
      << line;
}

TEST(HostCollectiveFitTest, OneShapeKeepsTheStepLatencyAndFitsBandwidth) {
  const std::vector<NcclTestsLogRow> rows = {
      Measured(NcclOp::kAllReduce, 4, 1 << 20, 3.0, 200)};
  const HostCollectiveFit fit = FitHostCollectives(HostGloo(), rows);
  EXPECT_FALSE(fit.hop_fitted);
  EXPECT_EQ(fit.platform.net_hop_us, 200);
  EXPECT_NEAR(fit.platform.intra_gbps, 3.0, 0.01);
}

TEST(HostCollectiveFitTest, FiguresStayPhysical) {
  // Faster than the step latency alone allows: no negative latency, and the
  // bandwidth stays within its bounds.
  const std::vector<NcclTestsLogRow> rows = {
      {NcclOp::kAllReduce, 4, 1 << 20, 10}, {NcclOp::kAllReduce, 4, 64, 5000}};
  const HostCollectiveFit fit = FitHostCollectives(HostGloo(), rows);
  EXPECT_GE(fit.platform.net_hop_us, 0);
  EXPECT_LE(fit.platform.net_hop_us, 10000);
  EXPECT_GE(fit.platform.intra_gbps, 0.01);
  EXPECT_LE(fit.platform.intra_gbps, 1000);
}

}  // namespace
}  // namespace et::sim

namespace et::sim {
namespace {

// Rows with no size (gloo all-reduces of a Kineto trace alone, issue 48):
// the times say nothing of bandwidth, so the step latency alone is learned;
// it made every such collective cost 0 (bandwidth at its bound, latency 0).
TEST(HostCollectiveFitTest, RowsWithoutSizesLearnTheStepLatencyOnly) {
  const std::vector<NcclTestsLogRow> rows = {
      Measured(NcclOp::kAllReduce, 2, 0, 0.7, 120),
      Measured(NcclOp::kAllReduce, 4, 0, 0.7, 120),
  };
  const HostCollectiveFit fit = FitHostCollectives(HostGloo(), rows);
  EXPECT_TRUE(fit.hop_fitted);
  EXPECT_NEAR(fit.platform.net_hop_us, 120, 1);
  EXPECT_DOUBLE_EQ(fit.platform.intra_gbps, 0.7);  // kept
  EXPECT_GT(HostCollectiveUs(fit.platform, NcclOp::kAllReduce, 2, 0), 0);
  EXPECT_LT(fit.median_error_after, 0.01);
}

// A fit never misses the rows more than what it started from.
TEST(HostCollectiveFitTest, AWorseFitKeepsThePreset) {
  // One shape whose latency alone exceeds the time: the least-squares step
  // goes to 0 and the bandwidth to its bound, which misses the rows more.
  const std::vector<NcclTestsLogRow> rows = {
      {NcclOp::kAllReduce, 2, 64, 1.0},
      {NcclOp::kAllReduce, 2, 64, 900.0},
  };
  const HostCollectiveFit fit = FitHostCollectives(HostGloo(), rows);
  EXPECT_LE(fit.median_error_after, fit.median_error_before);
}

}  // namespace
}  // namespace et::sim
