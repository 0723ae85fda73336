// Tests of the Kineto trace reader: real files of each vintage, and malformed
// inputs.
#include "converter/kineto/kineto_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/gzip_input.h"
#include "tests/converter/kineto/kineto_test_loader.h"

namespace et::kineto {
namespace {

using testing::DataPath;
using testing::KinetoEvents;

std::map<EventKind, int> CountKinds(const KinetoTrace& trace) {
  std::map<EventKind, int> counts;
  for (const KinetoEvent& e : trace.events()) ++counts[e.kind];
  return counts;
}

TEST(KinetoTraceTest, ReadsSimpleAddWithKernelsAndLaunchDims) {
  auto trace = KinetoTrace::Load(DataPath("hta/simple_add_kineto.json.gz"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto counts = CountKinds(*trace);
  // Independent count of the same file with nlohmann.
  std::map<std::string, int> expected;
  for (const auto& e :
       KinetoEvents(DataPath("hta/simple_add_kineto.json.gz"))) {
    if (e.value("ph", "") == "X") ++expected[e.value("cat", "")];
  }
  EXPECT_EQ(counts[EventKind::kKernel], expected["kernel"]);
  EXPECT_EQ(counts[EventKind::kKernel], 4);
  EXPECT_EQ(counts[EventKind::kCpuOp], expected["cpu_op"]);
  EXPECT_EQ(counts[EventKind::kRuntime], expected["cuda_runtime"]);
  EXPECT_EQ(trace->rank(), 0);
  int kernels_with_dims = 0;
  for (const KinetoEvent& e : trace->events()) {
    if (e.kind != EventKind::kKernel) continue;
    EXPECT_EQ(e.stream, 7);
    EXPECT_EQ(e.device, 0);
    EXPECT_GE(e.correlation, 0);
    ASSERT_GE(e.dims, 0);
    const LaunchDims& dims = trace->dims()[e.dims];
    EXPECT_EQ(dims.grid[0],
              dims.block[0]);  // 256x256 and 128x128 launches in this file
    ++kernels_with_dims;
  }
  EXPECT_EQ(kernels_with_dims, 4);
}

TEST(KinetoTraceTest, ReadsLegacyBareArrayAsCpuOps) {
  const std::string path = DataPath("pytorch-1.13-cpu/nn_demo_trace.json.gz");
  auto trace = KinetoTrace::Load(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->is_legacy_array());
  EXPECT_EQ(trace->events().size(), KinetoEvents(path).size());
  for (const KinetoEvent& e : trace->events())
    EXPECT_EQ(e.kind, EventKind::kCpuOp);
  // "pid": "CPU functions" is a string: it gets a negative id.
  EXPECT_LT(trace->events()[0].pid, 0);
  EXPECT_EQ(trace->name(trace->events()[0].name), "aten::zeros");
  EXPECT_EQ(trace->events()[0].ts_ns, 187000);
  EXPECT_EQ(trace->events()[0].dur_ns, 111000);
}

TEST(KinetoTraceTest, ReadsCudaSyncRecords) {
  auto trace =
      KinetoTrace::Load(DataPath("hta/event_sync_multi_stream_kineto.json.gz"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  int waits = 0;
  for (const KinetoEvent& e : trace->events()) {
    if (e.kind == EventKind::kSync &&
        trace->name(e.name) == "Stream Wait Event") {
      EXPECT_EQ(e.wait_on_stream, 20);
      EXPECT_EQ(e.stream, 24);
      EXPECT_EQ(e.wait_on_record_correlation, 1385);
      ++waits;
    }
    if (e.kind == EventKind::kRuntime &&
        trace->name(e.name) == "cudaStreamWaitEvent") {
      EXPECT_EQ(e.call, RuntimeCall::kStreamWaitEvent);
    }
  }
  EXPECT_EQ(waits, 1);
}

TEST(KinetoTraceTest, Accepts2021CategoriesAndExactFractionalTimes) {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 2,
     "ts": 1712867402348256.123, "dur": 10.5},
    {"ph": "X", "cat": "Runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 2,
     "ts": 1712867402348257, "dur": 1, "args": {"correlation": 9}},
    {"ph": "X", "cat": "Kernel", "name": "Cijk_gemm", "pid": 0, "tid": 3,
     "ts": 1712867402348260, "dur": 4, "args": {"correlation": 9, "stream": 3, "device": 0}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 3,
     "ts": 1712867402348270, "dur": 1, "args": {"bytes": 64}},
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "x"}}
  ]})";
  auto trace = KinetoTrace::Parse(json, "inline");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events().size(), 4u);
  EXPECT_EQ(trace->ignored_events(), 1);
  EXPECT_EQ(trace->events()[0].kind, EventKind::kCpuOp);
  EXPECT_EQ(trace->events()[0].ts_ns, 1712867402348256123);
  EXPECT_EQ(trace->events()[0].dur_ns, 10500);
  EXPECT_EQ(trace->events()[1].kind, EventKind::kRuntime);
  EXPECT_EQ(trace->events()[1].call, RuntimeCall::kLaunch);
  EXPECT_EQ(trace->events()[2].kind, EventKind::kKernel);
  EXPECT_EQ(trace->events()[3].kind, EventKind::kMemcpy);
  EXPECT_EQ(trace->events()[3].bytes, 64);
}

TEST(KinetoTraceTest, ClassifiesCudaDriverAndHipCalls) {
  EXPECT_EQ(ClassifyRuntimeCall("cudaLaunchKernel"), RuntimeCall::kLaunch);
  EXPECT_EQ(ClassifyRuntimeCall("cuLaunchKernelEx"), RuntimeCall::kLaunch);
  EXPECT_EQ(ClassifyRuntimeCall("hipExtLaunchKernel"), RuntimeCall::kLaunch);
  EXPECT_EQ(ClassifyRuntimeCall("cudaMemcpyAsync"), RuntimeCall::kLaunch);
  EXPECT_EQ(ClassifyRuntimeCall("hipMemsetAsync"), RuntimeCall::kLaunch);
  EXPECT_EQ(ClassifyRuntimeCall("cudaEventRecord"), RuntimeCall::kEventRecord);
  EXPECT_EQ(ClassifyRuntimeCall("hipStreamWaitEvent"),
            RuntimeCall::kStreamWaitEvent);
  EXPECT_EQ(ClassifyRuntimeCall("cudaStreamSynchronize"),
            RuntimeCall::kStreamSynchronize);
  EXPECT_EQ(ClassifyRuntimeCall("hipDeviceSynchronize"),
            RuntimeCall::kDeviceSynchronize);
  EXPECT_EQ(ClassifyRuntimeCall("cuCtxSynchronize"),
            RuntimeCall::kDeviceSynchronize);
  EXPECT_EQ(ClassifyRuntimeCall("cudaEventSynchronize"),
            RuntimeCall::kEventSynchronize);
  EXPECT_EQ(ClassifyRuntimeCall("cudaEventQuery"), RuntimeCall::kNone);
  EXPECT_EQ(ClassifyRuntimeCall("cudaStreamIsCapturing"), RuntimeCall::kNone);
}

TEST(KinetoTraceTest, TruncatedFileIsAClearError) {
  std::string text;
  ASSERT_TRUE(
      ReadFileMaybeGzip(DataPath("hta/simple_add_kineto.json.gz"), &text).ok());
  text.resize(text.size() / 2);
  auto trace = KinetoTrace::Parse(text, "half.json");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("half.json"), std::string::npos);
  EXPECT_NE(trace.status().message().find("truncated"), std::string::npos)
      << trace.status();
}

TEST(KinetoTraceTest, FileCutBetweenEventsIsAClearError) {
  auto trace = KinetoTrace::Parse(
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1},)",
      "cut.json");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("cut.json: truncated"),
            std::string::npos)
      << trace.status();
}

// A ts of 1e30 us used to become INT64_MIN ns and sort first; ids past int64
// wrapped. Times beyond +-2^61 ns are refused, naming the event and field.
TEST(KinetoTraceTest, OutOfRangeTimesAreClearErrors) {
  for (const char* ts : {"1e30", "1e300", "99999999999999999999999", "-1e30"}) {
    auto trace = KinetoTrace::Parse(
        std::string(R"({"traceEvents": [{"ph": "X", "name": "a", "ts": )") +
            ts + R"(, "dur": 1}]})",
        "ts.json");
    ASSERT_FALSE(trace.ok()) << ts;
    EXPECT_NE(trace.status().message().find("ts.json: event #0: 'ts'"),
              std::string::npos)
        << trace.status();
  }
}

TEST(KinetoTraceTest, MissingTraceEventsIsAClearError) {
  auto trace = KinetoTrace::Parse(
      R"({"schemaVersion": 1, "deviceProperties": []})", "x.json");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("no 'traceEvents'"),
            std::string::npos)
      << trace.status();
}

TEST(KinetoTraceTest, EventWithoutTsIsAClearError) {
  auto trace = KinetoTrace::Parse(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2},
                          {"ph": "X", "cat": "kernel", "name": "gemm", "dur": 2}]})",
      "nots.json");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("event #1 ('gemm')"),
            std::string::npos)
      << trace.status();
  EXPECT_NE(trace.status().message().find("without 'ts'"), std::string::npos);
}

// A field the format defines as a number is refused as a string, and values
// it cannot mean (a negative duration, rank -3, nelems past int64) are errors
// naming the event, not silently clamped or read as absent.
TEST(KinetoTraceTest, WrongTypesAndValuesAreRefused) {
  const std::map<std::string, std::string> cases = {
      {R"("ts": "1", "dur": 2)", "event #0: 'ts' is not a number"},
      {R"("ts": 1, "dur": "2")", "event #0: 'dur' is not a number"},
      {R"("ts": 1, "dur": -2)", "event #0 ('a'): negative 'dur' -2.000 us"},
      {R"("ts": 1, "dur": 2, "args": {"correlation": "7"})",
       "event #0: 'correlation' must be an integer in [0, 2^63), got \"7\""},
      {R"("ts": 1, "dur": 2, "args": {"In msg nelems": -4})",
       "event #0: 'In msg nelems' must be a count"},
      {R"("ts": 1, "dur": 2, "args": {"Out msg nelems": 18446744073709551616})",
       "event #0: 'Out msg nelems' must be a count"},
  };
  for (const auto& [fields, message] : cases) {
    auto trace = KinetoTrace::Parse(
        R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", )" +
            fields + "}]}",
        "w.json");
    ASSERT_FALSE(trace.ok()) << fields;
    EXPECT_NE(trace.status().message().find("w.json: " + message),
              std::string::npos)
        << trace.status();
  }
  for (const char* rank : {"-3", "1099511627776", "\"0\""}) {
    auto trace =
        KinetoTrace::Parse(std::string(R"({"distributedInfo": {"rank": )") +
                               rank + R"(}, "traceEvents": []})",
                           "r.json");
    ASSERT_FALSE(trace.ok()) << rank;
    EXPECT_NE(trace.status().message().find("distributedInfo.rank"),
              std::string::npos)
        << trace.status();
  }
  for (const char* world : {"0", "-8", "1099511627776", "\"8\""}) {
    auto trace = KinetoTrace::Parse(
        std::string(R"({"distributedInfo": {"world_size": )") + world +
            R"(}, "traceEvents": []})",
        "w.json");
    ASSERT_FALSE(trace.ok()) << world;
    EXPECT_NE(trace.status().message().find("distributedInfo.world_size"),
              std::string::npos)
        << trace.status();
  }
  auto world = KinetoTrace::Parse(
      R"({"distributedInfo": {"rank": 3, "world_size": 8}, "traceEvents": []})",
      "w.json");
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_EQ(world->rank(), 3);
  EXPECT_EQ(world->world_size(), 8);
}

TEST(KinetoTraceTest, TwoDocumentsAndCutFilesAreClearErrors) {
  const std::string doc =
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]})";
  auto two = KinetoTrace::Parse(doc + doc, "two.json");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("data after the end"),
            std::string::npos)
      << two.status();
  // Cut near its end: not "at the start, after 0 events".
  auto cut = KinetoTrace::Parse(doc.substr(0, doc.size() - 3), "cut.json");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("a file cut short?"), std::string::npos)
      << cut.status();
  EXPECT_EQ(cut.status().message().find("at the start"), std::string::npos);
}

TEST(KinetoTraceTest, MissingFileIsAnError) {
  EXPECT_FALSE(KinetoTrace::Load(DataPath("no/such/kineto.json")).ok());
}

// Issue 51: every field of an event holds what the format says or the trace
// is refused, naming the event and the field; what real traces write against
// the format (string tids of 2021, AMD's string byte counts) is read and
// counted.
TEST(KinetoTraceTest, EachFieldIsCheckedByTypeAndRange) {
  const std::map<std::string, std::string> cases = {
      {R"("name": 5, "ts": 1, "dur": 2)", "event #0: 'name' must be a string"},
      {R"("name": null, "ts": 1, "dur": 2)", "'name' must be a string"},
      {R"("ts": 1, "dur": 2, "cat": 3)", "event #0: 'cat' must be a string"},
      {R"("ts": 1, "dur": 2, "pid": 1.5)",
       "event #0: 'pid' must be an integer"},
      {R"("ts": 1, "dur": 2, "tid": {})",
       "'tid' must be an integer that fits "
       "64 bits, or a string, got an object"},
      {R"("ts": 1, "dur": 2, "tid": 9223372036854775808)", "'tid' must be"},
      {R"("ts": 1, "dur": 2, "args": "x")",
       "event #0: 'args' must be an object"},
      {R"("ts": 1, "dur": 2, "args": {"External id": "9"})",
       "'External id' must be an integer in [0, 2^63)"},
      {R"("ts": 1, "dur": 2, "args": {"block": [1, 2]})", "'block' must be"},
      {R"("ts": 1, "dur": 2, "args": {"stream": "7"})", "'stream' must be"},
      {R"("ts": 1, "dur": 2, "args": {"device": -1})",
       "'device' must be an integer in [0, 65536), got -1"},
      {R"("ts": 1)", "event #0 ('a'): complete event without 'dur'"},
      {R"("ts": 2305843009213693, "dur": 2305843009213693)",
       "'ts' + 'dur' ends past 2^61 ns"},
  };
  for (const auto& [fields, message] : cases) {
    const std::string named =
        fields.find("\"name\"") == std::string::npos ? R"("name": "a", )" : "";
    auto trace =
        KinetoTrace::Parse(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", )" +
                               named + fields + "}]}",
                           "f.json");
    ASSERT_FALSE(trace.ok()) << fields;
    EXPECT_NE(trace.status().message().find(message), std::string::npos)
        << trace.status();
  }
  // A grid written as text: a kernel's is refused; a host range's is
  // Inductor's expression around a Triton launch ("grid(100,)"), skipped.
  auto text_grid = [](const std::string& cat) {
    return KinetoTrace::Parse(
        R"j({"traceEvents": [{"ph": "X", "cat": ")j" + cat +
            R"j(", "name": "k", "ts": 1, "dur": 2, "args": {"grid": )j"
            R"j("grid(100,)"}}]})j",
        "f.json");
  };
  ASSERT_FALSE(text_grid("kernel").ok());
  EXPECT_NE(text_grid("kernel").status().message().find(
                "event #0: 'grid' must be a list of three integers in [0, "
                "2^31), got \"grid(100,)\""),
            std::string::npos)
      << text_grid("kernel").status();
  EXPECT_TRUE(text_grid("cpu_op").ok());
  // ROCm 6 writes a runtime call's stream handle in hexadecimal: read.
  auto hex = [](const std::string& stream) {
    return KinetoTrace::Parse(
        R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": )"
        R"("hipMemcpyWithStream", "ts": 1, "dur": 2, "args": {"stream": ")" +
            stream + R"("}}]})",
        "f.json");
  };
  EXPECT_TRUE(hex("0x1f").ok());
  ASSERT_FALSE(hex("0xzz").ok());
  EXPECT_NE(hex("0xzz").status().message().find(
                "'stream' must be an integer in [-1, 2^63) or a hexadecimal "
                "handle, got \"0xzz\""),
            std::string::npos);
  const std::map<std::string, std::string> headers = {
      {R"("deviceProperties": {"name": "H100"})",
       "deviceProperties must be a list of devices, got an object"},
      {R"("deviceProperties": [7])",
       "deviceProperties[0] must be an object, got 7"},
      {R"("deviceProperties": [{"name": "H100"}, {"name": 5}])",
       "deviceProperties[1].name must be a string, got 5"},
      {R"("distributedInfo": {"rank": 4, "world_size": 2})",
       "distributedInfo.rank 4 is not below distributedInfo.world_size 2"},
      {R"("distributedInfo": [0])", "distributedInfo must be an object"},
  };
  for (const auto& [field, message] : headers) {
    auto trace =
        KinetoTrace::Parse("{" + field + R"(, "traceEvents": []})", "h.json");
    ASSERT_FALSE(trace.ok()) << field;
    EXPECT_NE(trace.status().message().find("h.json: " + message),
              std::string::npos)
        << trace.status();
  }
  // Instant and flow events have no 'dur'; string tids and byte counts are
  // read and counted.
  auto odd = KinetoTrace::Parse(
      R"({"traceEvents": [
        {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 5, "s": "t"},
        {"ph": "s", "id": 1, "name": "ac2g", "pid": 1, "tid": 2, "ts": 5},
        {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": "25738",
         "ts": 5, "dur": 1},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpy", "pid": 1,
         "tid": "25738", "ts": 6, "dur": 1, "args": {"bytes": "4096"}}]})",
      "odd.json");
  ASSERT_TRUE(odd.ok()) << odd.status();
  ASSERT_EQ(odd->events().size(), 2u);
  EXPECT_EQ(odd->events()[0].tid, 25738);
  EXPECT_EQ(odd->events()[1].bytes, 4096);
  ASSERT_EQ(odd->read_warnings().size(), 2u);
  EXPECT_NE(odd->read_warnings()[0].find("2 events give 'tid' as a numeric"),
            std::string::npos);
  EXPECT_NE(odd->read_warnings()[1].find("1 events give 'bytes'"),
            std::string::npos);
}

}  // namespace
}  // namespace et::kineto
