// GPU replays (label gpu: `ctest -L gpu`). Each test skips with a message where
// the build has no CUDA backend or the machine no CUDA device; on a GPU machine
// they run cuBLAS GEMMs, memory-bound and timed kernels across two streams, and
// NCCL on one rank.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"
#include "replay/mpi_world.h"
#include "replay/replay_session.h"
#include "replay_test_graphs.h"
#include "test_world.h"
#if ET_REPLAY_WITH_CUDA
#include "replay/cuda_backend.h"
#endif

namespace et::replay {
namespace {

// Skips the test unless a CUDA device can be used.
#if ET_REPLAY_WITH_CUDA
#define SKIP_WITHOUT_GPU()                                                    \
  do {                                                                        \
    auto count = CudaDeviceCount();                                           \
    if (!count.ok()) GTEST_SKIP() << "skipped: " << count.status().message(); \
  } while (0)
#else
#define SKIP_WITHOUT_GPU() \
  GTEST_SKIP() << "skipped: built without the CUDA toolkit"
#endif

using testing::World;

ChakraProtoMsg::Node Gemm(uint64_t id, int64_t m, int64_t n, int64_t k,
                          const char* type, std::vector<uint64_t> deps,
                          int64_t stream) {
  ChakraProtoMsg::Node node =
      testing::CompNode(id, "aten::mm", 100, deps, false, stream);
  node.mutable_inputs()->set_shapes(
      "[[" + std::to_string(m) + ", " + std::to_string(k) + "], [" +
      std::to_string(k) + ", " + std::to_string(n) + "]]");
  node.mutable_inputs()->set_types(std::string("['") + type + "', '" + type +
                                   "']");
  return node;
}

TEST(GpuReplayTest, GemmsKernelsAndAllReduceOnTwoStreams) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(World(), nullptr);
  ChakraProtoMsg::Node copy =
      testing::CompNode(3, "vectorized_elementwise_kernel", 50, {1}, false, 7);
  SetUint64(copy.mutable_attr(), attr::kTensorSize, 256 << 20);
  std::vector<ChakraProtoMsg::Node> nodes = {
      Gemm(1, 4096, 4096, 4096, "Tensor(c10::Half)", {}, 7),
      Gemm(2, 2048, 2048, 2048, "Tensor(float)", {}, 13),
      copy,
      testing::CompNode(4, "some_kernel", 200, {2}, false, 13),
      testing::CollNode(5, ChakraProtoMsg::ALL_REDUCE, 64 << 20, {3, 4}),
  };
  const std::string path = testing::TempEtPath("gpu_mix.et");
  ASSERT_TRUE(WriteEtFile(path, testing::Metadata(), nodes).ok());
  ReplayOptions options;
  options.trace = path;
  options.device = "cuda";
  options.json_path = testing::TempEtPath("gpu_mix.json");
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->gemm_count, 2);
  EXPECT_GT(report->gemm_tflops, 1.0);  // any datacenter GPU does far more
  EXPECT_EQ(report->comm_calls_per_iteration, 1);
  for (const OpStat& s : report->ops) {
    EXPECT_GT(s.mean_ns, 0);
  }
}

// Every transpose combination, non-square shapes, every float type, addmm's
// operands after its bias, and an integer GEMM (run as float32): cuBLAS rejects
// a leading dimension below the rows it reads, so a layout error fails here.
TEST(GpuReplayTest, TransposedAndMixedTypeGemmsAreValidCublasCalls) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(World(), nullptr);
  std::vector<ChakraProtoMsg::Node> nodes;
  uint64_t id = 1;
  for (const char* type :
       {"Tensor(float)", "Tensor(c10::Half)", "Tensor(c10::BFloat16)",
        "Tensor(double)", "Tensor(signed char)"}) {
    for (const char* strides : {"[[64, 1], [80, 1]]", "[[1, 96], [80, 1]]",
                                "[[64, 1], [1, 64]]", "[[1, 96], [1, 64]]"}) {
      ChakraProtoMsg::Node mm = Gemm(id, 96, 80, 64, type, {}, 7);
      SetString(mm.mutable_attr(), attr::kInputStrides, strides);
      nodes.push_back(mm);
      ++id;
    }
  }
  ChakraProtoMsg::Node addmm =
      testing::CompNode(id, "aten::addmm", 100, {}, false, 13);
  addmm.mutable_inputs()->set_shapes("[[80], [96, 64], [64, 80], [], []]");
  addmm.mutable_inputs()->set_types(
      "['Tensor(float)', 'Tensor(float)', 'Tensor(float)', 'Int', 'Int']");
  SetString(addmm.mutable_attr(), attr::kInputStrides,
            "[[1], [64, 1], [1, 64], [], []]");
  nodes.push_back(addmm);
  const std::string path = testing::TempEtPath("gpu_layouts.et");
  ASSERT_TRUE(WriteEtFile(path, testing::Metadata(), nodes).ok());
  ReplayOptions options;
  options.trace = path;
  options.device = "cuda";
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->gemm_count, static_cast<int64_t>(nodes.size()));
}

TEST(GpuReplayTest, TimedKernelLastsItsRecordedDuration) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(World(), nullptr);
  const std::string path = testing::TempEtPath("gpu_timed.et");
  ASSERT_TRUE(WriteEtFile(path, testing::Metadata(),
                          {testing::CompNode(1, "kernel", 2000, {}, false, 7)})
                  .ok());
  ReplayOptions options;
  options.trace = path;
  options.device = "cuda";
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->ops.size(), 1u);
  EXPECT_NEAR(report->ops[0].mean_ns / 1e3, 2000.0, 100.0);
}

// 400 kernels of 5 us back to back on one stream: timed with an event on each
// side of each (--op-timing in-step) the step stretched by ~3.8 us per kernel
// on an H100; the default times the step without them.
TEST(GpuReplayTest, StepIsTimedWithoutTheEventsAroundEachKernel) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(World(), nullptr);
  std::vector<ChakraProtoMsg::Node> nodes;
  for (uint64_t id = 1; id <= 400; ++id) {
    std::vector<uint64_t> deps;
    if (id > 1) deps.push_back(id - 1);
    nodes.push_back(testing::CompNode(id, "kernel", 5, deps, false, 7));
  }
  const std::string path = testing::TempEtPath("gpu_chain.et");
  ASSERT_TRUE(WriteEtFile(path, testing::Metadata(), nodes).ok());
  ReplayOptions options;
  options.trace = path;
  options.device = "cuda";
  options.timed_iterations = 5;
  auto separate = RunReplaySession(options, World(), nullptr);
  ASSERT_TRUE(separate.ok()) << separate.status();
  options.separate_op_timing = false;
  auto in_step = RunReplaySession(options, World(), nullptr);
  ASSERT_TRUE(in_step.ok()) << in_step.status();
  EXPECT_EQ(separate->op_timing_iterations, 1);
  EXPECT_EQ(in_step->op_timing_iterations, 0);
  const double kernels_us = 400 * 5.0;
  EXPECT_GT(separate->step.predicted_us, kernels_us);
  // The events' cost is gone from the step: at least 1 us per kernel less.
  EXPECT_LT(separate->step.predicted_us, in_step->step.predicted_us - 400.0)
      << "separate " << separate->step.predicted_us << " us, in-step "
      << in_step->step.predicted_us << " us";
}

TEST(GpuReplayTest, MemoryCapBelowTheTraceIsAClearError) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(World(), nullptr);
  const std::string path = testing::TempEtPath("gpu_big.et");
  ASSERT_TRUE(
      WriteEtFile(path, testing::Metadata(),
                  {Gemm(1, 32768, 32768, 32768, "Tensor(float)", {}, 7)})
          .ok());
  ReplayOptions options;
  options.trace = path;
  options.device = "cuda";
  options.memory_cap_gib = 1;
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kResourceExhausted)
      << report.status();
}

}  // namespace
}  // namespace et::replay
