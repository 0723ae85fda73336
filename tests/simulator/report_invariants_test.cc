// Every trace the project holds, through et-sim, keeps the report's invariants
// (simulator/report/report_checks.h): no busy or exposed share above its step
// (a Kineto ResNet-50 said "host busy 324.790 of 176.569 ms (184%)"), compute
// + exposed communication + idle within the graph's time, no collective of a
// group larger than one at 0 ns (gloo all-reduces of Kineto traces alone cost
// 0 after a fit to their sizeless rows) (issue 48). Each JSON trace of the
// folders below is converted alone (an ET, or a Kineto trace alone), each .et
// is read as it is, and each is simulated as recorded and unprofiled.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "simulator/report/report_checks.h"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Traces() {
  std::vector<std::string> out;
  const std::string data = ET_TEST_DATA;
  const std::string shared = ET_SHARED_TRACES;
  for (const std::string& dir :
       {data + "/kineto-only", data + "/hta", data + "/param", data + "/h100",
        data + "/pytorch-1.13-cpu", data + "/tp-dp", data + "/pp",
        data + "/cpu-corpus", data + "/torch2-cpu", data + "/chakra",
        data + "/public", shared + "/hta", shared + "/kineto-only",
        shared + "/param", shared + "/h100", shared + "/chakra"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string p = e.path().string();
      if (absl::EndsWith(p, ".json.gz") || absl::EndsWith(p, ".json") ||
          absl::EndsWith(p, ".et"))
        out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ReportInvariantsTest, EveryTraceKeepsThem) {
  const std::string dir = ::testing::TempDir() + "/report_invariants";
  fs::create_directories(dir);
  int simulated = 0, index = 0;
  for (const std::string& trace : Traces()) {
    SCOPED_TRACE(trace);
    std::string et = trace;
    if (!absl::EndsWith(trace, ".et")) {
      et = dir + "/" + std::to_string(index++) + ".et";
      // Files that are not traces of their own (light profiles, metadata,
      // a trace the converter refuses by design) are not this test's.
      if (!convert::ConvertFile(trace, et, convert::ConvertOptions()).ok())
        continue;
    }
    for (HostTimeMode mode :
         {HostTimeMode::kRecorded, HostTimeMode::kUnprofiled}) {
      SimOptions options;
      options.host_time = mode;
      auto sim = Simulation::Run({et, 0}, options);
      if (!sim.ok()) continue;  // refused with its reason: no report to check
      ++simulated;
      const Report& r = (*sim)->report();
      EXPECT_EQ(absl::StrJoin(ReportInconsistencies(r), "; "), "");
      for (const std::string& n : r.notes)
        EXPECT_FALSE(absl::StrContains(n, "inconsistent report")) << n;
    }
  }
  EXPECT_GT(simulated, 150);
}

}  // namespace
}  // namespace et::sim
