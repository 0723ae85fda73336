// ChromeTrace in its two forms: held in memory, and streamed to a temporary
// file beside its output as it grows (et-sim --timeline of millions of ops).
// Both must write the same document; a streamed trace that is never written,
// or written to another path, publishes nothing.
#include "step/chrome_trace.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace et {
namespace {

namespace fs = std::filesystem;

std::string Scratch(const std::string& name) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/chrome_trace_", getpid());
  fs::create_directories(dir);
  return dir + "/" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// 3,000 events (~400 KB): a streamed trace spilling every 4 KB writes them
// in about a hundred pieces.
constexpr size_t kSpillBytes = 4096;
void Fill(ChromeTrace* trace) {
  trace->NameProcess(0, "rank 0 (predicted)");
  trace->NameThread(0, 1, "stream 7", 2);
  for (int i = 0; i < 3000; ++i) {
    trace->AddComplete(0, 1, "aten::add \xff", "compute", 1000LL * i, 750,
                       {{"node", i}});
  }
}

TEST(ChromeTraceTest, StreamedTraceWritesWhatTheHeldOneWrites) {
  ChromeTrace held;
  Fill(&held);
  const std::string a = Scratch("held.json"), b = Scratch("streamed.json");
  ASSERT_TRUE(held.Write(a).ok());
  {
    ChromeTrace streamed(b, kSpillBytes);
    Fill(&streamed);
    ASSERT_TRUE(streamed.Write(b).ok());
    EXPECT_EQ(streamed.complete_events(), 3000);
  }
  const std::string text = Read(a);
  EXPECT_EQ(Read(b), text);
  EXPECT_EQ(text, held.ToJson());
  const nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_EQ(doc["traceEvents"].size(), 3003u);
  // Invalid UTF-8 in a name is replaced, never rejected.
  EXPECT_EQ(doc["traceEvents"][3]["name"], "aten::add \xEF\xBF\xBD");
  EXPECT_DOUBLE_EQ(doc["traceEvents"][4]["ts"].get<double>(), 1.0);
}

TEST(ChromeTraceTest, UnwrittenOrMisdirectedStreamPublishesNothing) {
  const std::string path = Scratch("never.json");
  {
    ChromeTrace streamed(path, kSpillBytes);
    Fill(&streamed);
  }
  EXPECT_FALSE(fs::exists(path));
  {
    ChromeTrace streamed(path, kSpillBytes);
    streamed.NameProcess(0, "x");
    EXPECT_FALSE(streamed.Write(Scratch("other.json")).ok());
  }
  EXPECT_FALSE(fs::exists(Scratch("other.json")));
  EXPECT_FALSE(fs::exists(path));
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos)
        << e.path();
  }
}

}  // namespace
}  // namespace et
