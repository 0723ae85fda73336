// An ET and a Kineto trace of different runs are refused in one line
// (converter/kineto/kineto_identity.h); each file's own partner is accepted.
// Before, another recording's Kineto trace matched "13599 of 13599 host ops
// (100.0%)" and its true step was taken for this run's.
#include "converter/kineto/kineto_identity.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

absl::Status ConvertPair(const std::string& et, const std::string& kineto,
                         int rank = -1) {
  ConvertOptions options;
  options.kineto_path = DataPath(kineto);
  options.rank = rank;
  return ConvertFile(DataPath(et), TempOut("pair.et"), options).status();
}

void ExpectRefused(const absl::Status& s,
                   const std::vector<std::string>& says) {
  ASSERT_FALSE(s.ok());
  const std::string message(s.message());
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 0) << message;
  for (const std::string& part : says)
    EXPECT_TRUE(absl::StrContains(message, part)) << message;
}

// Two H100 recordings of this project (torch 2.11, Kineto): each process
// wrote its pid in both files.
TEST(KinetoIdentityTest, AnotherProcessesKinetoTraceIsRefused) {
  EXPECT_TRUE(
      ConvertPair("h100/mlp1024_et.json.gz", "h100/mlp1024_kineto.json.gz")
          .ok());
  ExpectRefused(
      ConvertPair("h100/mlp1024_et.json.gz", "h100/mlp4096_kineto.json.gz"),
      {"mlp4096_kineto.json.gz: recorded by process 632",
       "mlp1024_et.json.gz by process 433", "not the same run"});
}

// The 4-rank recording made with Debian's torch 1.13 (legacy profiler:
// record_trace.py writes the pid and rank into its trace): rank 0's ET with
// rank 1's trace is refused by process, and by rank when the rank is known.
TEST(KinetoIdentityTest, AnotherRanksTraceIsRefused) {
  EXPECT_TRUE(ConvertPair("recorded/ddp_gpt_4r_et_r0.json.gz",
                          "recorded/ddp_gpt_4r_kineto_r0.json.gz", 0)
                  .ok());
  ExpectRefused(ConvertPair("recorded/ddp_gpt_4r_et_r0.json.gz",
                            "recorded/ddp_gpt_4r_kineto_r1.json.gz"),
                {"recorded by process", "not the same run"});
  ExpectRefused(ConvertPair("recorded/ddp_gpt_4r_et_r0.json.gz",
                            "recorded/ddp_gpt_4r_kineto_r1.json.gz", 0),
                {"the Kineto trace is of rank 1", "the ET of rank 0"});
}

// A legacy profiler trace without the pid record_trace.py adds has nothing to
// compare: accepted, with a warning saying which file lacks what (not that
// the ET is old: it has its pid and time); one with a pid gets none.
TEST(KinetoIdentityTest, AnUncheckableTraceIsAcceptedWithAWarning) {
  auto warned = [](const std::string& et, const std::string& kineto) {
    ConvertOptions options;
    options.kineto_path = DataPath(kineto);
    auto report = ConvertFile(DataPath(et), TempOut("w.et"), options);
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) return false;
    for (const std::string& w : report->warnings) {
      if (absl::StrContains(w, "nothing shows it was recorded in the same run"))
        return absl::StrContains(w,
                                 "it records no process id, rank or wall "
                                 "clock (the legacy profiler");
    }
    return false;
  };
  EXPECT_TRUE(warned("recorded/ddp_gpt_2r_et_r1.json.gz",
                     "recorded/ddp_gpt_2r_kineto_r1.json.gz"));
  EXPECT_FALSE(warned("recorded/ddp_gpt_4r_et_r1.json.gz",
                      "recorded/ddp_gpt_4r_kineto_r1.json.gz"));
}

// Where no pid says it, the wall clocks do: an ET started in 2020 does not
// pair with a trace recorded in 2026, whatever the time zone.
TEST(KinetoIdentityTest, TracesDaysApartAreRefused) {
  auto trace =
      kineto::KinetoTrace::Load(DataPath("h100/mlp1024_kineto.json.gz"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  StringPool pool;
  EtRun et;
  et.path = "old_et.json";
  et.local_time = "2020-01-01 00:00:00";
  ExpectRefused(CheckSameRun(et, "k.json", *trace, {}, pool),
                {"k.json: recorded",
                 "days after the execution trace "
                 "old_et.json (2020-01-01 00:00:00 local time)"});
  // The ET's own start, in any time zone, is accepted.
  for (const char* local :
       {"2026-11-23 01:55:20", "2026-11-22 18:55:20", "2026-11-23 10:25:20"}) {
    et.local_time = local;
    EXPECT_TRUE(CheckSameRun(et, "k.json", *trace, {}, pool).ok()) << local;
  }
}

}  // namespace
}  // namespace et::convert
