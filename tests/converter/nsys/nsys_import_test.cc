// et-convert on Nsight Systems SQLite exports (tests/data/nsys, schemas 2.9.1
// to 3.25.0): every kernel of each export is a node on its GPU's graph
// (counted against the table with SQL here), NCCL kernels are collectives,
// NVTX ranges are host ops; and broken or hostile exports (truncated, not
// nsys, NULL ids, an unknown schema, a view in place of a table) are one-line
// errors. et-sim on the 2-GPU capture is in nsys_cli_test.sh.
#include "converter/nsys/nsys_import.h"

#include <sqlite3.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/gzip_input.h"
#include "base/status_macros.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph_validation.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

constexpr char kTwoGpu[] = "nsys/nsysai_mfu_2gpu_before.sqlite.gz";
constexpr char kRtx3080[] = "nsys/nsysai_mock_rtx3080.sqlite.gz";
constexpr char kCloverleaf[] =
    "nsys/pipit_perlmutter-cloverleaf-cuda.sqlite.gz";
constexpr char kSaxpy[] =
    "nsys/pipit_saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz";

// An inflated, writable copy of a test export, for sqlite3 and for damage.
std::string PlainCopy(const std::string& rel, const std::string& name) {
  std::string bytes;
  EXPECT_TRUE(ReadFileMaybeGzip(DataPath(rel), &bytes).ok());
  const std::string path = TempOut(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Runs `sql` on `path` and returns its rows, each as one '|'-joined string.
std::vector<std::string> Sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::vector<std::string> rows;
  char* error = nullptr;
  sqlite3_exec(
      db, sql.c_str(),
      [](void* out, int n, char** values, char**) {
        std::string row;
        for (int i = 0; i < n; ++i)
          absl::StrAppend(&row, i ? "|" : "", values[i] ? values[i] : "NULL");
        static_cast<std::vector<std::string>*>(out)->push_back(row);
        return 0;
      },
      &rows, &error);
  EXPECT_EQ(error, nullptr) << error << " in " << sql;
  sqlite3_free(error);
  sqlite3_close(db);
  return rows;
}

int64_t SqlCount(const std::string& path, const std::string& sql) {
  auto rows = Sql(path, sql);
  return rows.size() == 1 ? std::stoll(rows[0]) : -1;
}

struct Converted {
  std::vector<ConvertReport> summaries;
  std::vector<Graph> graphs;  // by rank
};

absl::StatusOr<Converted> ConvertExport(const std::string& input,
                                        const std::string& name) {
  const std::string pattern = TempOut(name + ".%d.et");
  ASSIGN_OR_RETURN(std::vector<RankResult> results,
                   ConvertNsysExport(input, pattern, {}));
  ASSIGN_OR_RETURN(bool written, PublishRankOutputs(&results));
  Converted c;
  for (RankResult& r : results) {
    if (!r.summary.ok()) return r.summary.status();
    c.summaries.push_back(*r.summary);
    ASSIGN_OR_RETURN(Graph g, LoadGraph(r.job.output));
    c.graphs.push_back(std::move(g));
  }
  if (!written) return absl::InternalError("not written");
  return c;
}

bool IsKernelNode(const Node& n) {
  return GetBool(n, attr::kIsGpuOp).value_or(false) &&
         GetString(n, attr::kGpuCategory).value_or("") == "kernel";
}

// The export's kernels per graph, in the graphs' (device, pid) order.
std::vector<int64_t> KernelsPerGraph(const std::string& db) {
  std::vector<int64_t> counts;
  for (const std::string& row :
       Sql(db,
           "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId, "
           "(globalPid >> 24) & 16777215 ORDER BY deviceId, "
           "(globalPid >> 24) & 16777215")) {
    counts.push_back(std::stoll(row));
  }
  return counts;
}

class EveryExportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryExportTest, EveryKernelIsANodeOnItsGpusGraph) {
  const std::string rel = GetParam();
  const std::string name = rel.substr(5, rel.find('.') - 5);
  auto c = ConvertExport(DataPath(rel), name);
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string db = PlainCopy(rel, name + ".sqlite");
  const std::vector<int64_t> expected = KernelsPerGraph(db);
  ASSERT_EQ(c->graphs.size(), expected.size());
  int64_t total = 0;
  for (size_t r = 0; r < c->graphs.size(); ++r) {
    const Graph& g = c->graphs[r];
    EXPECT_TRUE(ValidateGraph(g).ok()) << name << " rank " << r;
    int64_t kernels = 0;
    for (NodeIndex i = 0; i < g.size(); ++i)
      kernels += IsKernelNode(g.node(i)) ? 1 : 0;
    EXPECT_EQ(kernels, expected[r]) << name << " rank " << r;
    total += kernels;
    EXPECT_EQ(c->summaries[r].kineto_host_ops_matched,
              c->summaries[r].kineto_host_ops);
  }
  EXPECT_EQ(total,
            SqlCount(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
}

INSTANTIATE_TEST_SUITE_P(SharedExports, EveryExportTest,
                         ::testing::Values(kTwoGpu, kRtx3080, kCloverleaf,
                                           kSaxpy));

// In the 2xH100 capture NCCL runs all-to-alls as grouped send/recv kernels,
// launched under PyTorch's c10d::alltoall_base_ ranges: each kernel the
// export also holds the launch of is an ALL_TO_ALL collective, and both ranks
// issue the same number, so a simulator can pair them.
TEST(NsysImportTest, NcclKernelsAreCollectivesMatchedAcrossRanks) {
  auto c = ConvertExport(DataPath(kTwoGpu), "two_gpu_nccl");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->graphs.size(), 2u);
  const std::string db = PlainCopy(kTwoGpu, "two_gpu_nccl.sqlite");
  std::vector<int64_t> collectives;
  for (int r = 0; r < 2; ++r) {
    const int64_t launched = SqlCount(
        db, absl::StrFormat(
                "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
                "StringIds s ON s.id = k.demangledName WHERE s.value LIKE "
                "'nccl%%' AND k.deviceId = %d AND EXISTS (SELECT 1 FROM "
                "CUPTI_ACTIVITY_KIND_RUNTIME c WHERE c.correlationId = "
                "k.correlationId AND (c.globalTid >> 24) = (k.globalPid >> "
                "24))",
                r));
    int64_t found = 0, nccl = 0;
    const Graph& g = c->graphs[r];
    for (NodeIndex i = 0; i < g.size(); ++i) {
      const Node& n = g.node(i);
      if (!absl::StartsWith(n.name(), "ncclDevKernel")) continue;
      ++nccl;
      if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      EXPECT_EQ(GetInt(n, attr::kCommType).value_or(-1),
                ChakraProtoMsg::ALL_TO_ALL);
      ++found;
    }
    EXPECT_GT(launched, 30);
    EXPECT_EQ(found, launched) << "rank " << r;
    EXPECT_EQ(nccl, launched + 1) << "one kernel launched before the window";
    collectives.push_back(found);
    // The size is not in this export: counted, not guessed.
    bool noted = false;
    for (const std::string& w : c->summaries[r].warnings)
      noted = noted || absl::StrContains(w, "have no message size");
    EXPECT_TRUE(noted);
  }
  EXPECT_EQ(collectives[0], collectives[1]);
}

// PyTorch's emit_nvtx ranges are the host ops: every NVTX range of the process
// plus each runtime call outside all of them, with emit_nvtx's
// ", seq = ..., op_id = ..." tail cut from the names.
TEST(NsysImportTest, NvtxRangesAreHostOps) {
  auto c = ConvertExport(DataPath(kTwoGpu), "two_gpu_nvtx");
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string db = PlainCopy(kTwoGpu, "two_gpu_nvtx.sqlite");
  Sql(db, "CREATE INDEX by_thread ON NVTX_EVENTS (globalTid, start)");
  const std::vector<std::string> pids =
      Sql(db,
          "SELECT DISTINCT (globalPid >> 24) & 16777215 FROM "
          "CUPTI_ACTIVITY_KIND_KERNEL ORDER BY deviceId");
  ASSERT_EQ(pids.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const std::string pid = pids[r];
    const int64_t ranges = SqlCount(
        db,
        "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, "
        "71) AND end IS NOT NULL AND ((globalTid >> 24) & 16777215) = " +
            pid);
    const int64_t lone_calls = SqlCount(
        db,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME c WHERE "
        "((c.globalTid >> 24) & 16777215) = " +
            pid +
            " AND NOT EXISTS (SELECT 1 FROM NVTX_EVENTS n WHERE n.globalTid = "
            "c.globalTid AND n.eventType IN (59, 60, 70, 71) AND n.start <= "
            "c.start AND n.end >= c.end)");
    EXPECT_GT(ranges, 9000);
    EXPECT_EQ(c->summaries[r].kineto_host_ops, ranges + lone_calls);
    int64_t aten = 0;
    const Graph& g = c->graphs[r];
    for (NodeIndex i = 0; i < g.size(); ++i) {
      const Node& n = g.node(i);
      EXPECT_FALSE(absl::StrContains(n.name(), "op_id =")) << n.name();
      if (absl::StartsWith(n.name(), "aten::") &&
          GetBool(n, attr::kIsCpuOp).value_or(false))
        ++aten;
    }
    EXPECT_GT(aten, 100) << "rank " << r;
  }
}

// A copy of the small export with `sql` applied.
std::string Damaged(const std::string& name, const std::string& sql) {
  const std::string path = PlainCopy(kRtx3080, name);
  Sql(path, sql);
  return path;
}

void ExpectOneLineError(const std::string& path, const std::string& words) {
  auto r = ConvertFile(path, TempOut("broken.et"), {});
  ASSERT_FALSE(r.ok()) << path;
  const std::string message(r.status().message());
  EXPECT_TRUE(absl::StrContains(message, path)) << message;
  EXPECT_TRUE(absl::StrContains(message, words)) << message;
  EXPECT_FALSE(absl::StrContains(message, "\n")) << message;
}

TEST(NsysImportTest, BrokenExportsAreOneLineErrors) {
  // Truncated: the first half of the file.
  const std::string whole = PlainCopy(kCloverleaf, "cut.sqlite");
  std::string bytes;
  ASSERT_TRUE(ReadFileMaybeGzip(whole, &bytes).ok());
  const std::string cut = TempOut("cut_half.sqlite");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  ExpectOneLineError(cut, "malformed");

  const std::string other = TempOut("other.sqlite");
  Sql(other, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)");
  ExpectOneLineError(other, "not an Nsight Systems export");

  ExpectOneLineError(
      Damaged("no_corr.sqlite",
              "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL "
              "WHERE rowid = (SELECT min(rowid) FROM "
              "CUPTI_ACTIVITY_KIND_KERNEL)"),
      "has no 'correlation' id");
  ExpectOneLineError(
      Damaged("no_pid.sqlite",
              "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET globalPid = NULL"),
      "CUPTI_ACTIVITY_KIND_MEMCPY row 0 has no globalPid");
  ExpectOneLineError(
      Damaged("no_tid.sqlite",
              "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL"),
      "has no globalTid");
  ExpectOneLineError(
      Damaged("future.sqlite",
              "UPDATE META_DATA_EXPORT SET value = '4.1.0' WHERE name = "
              "'EXPORT_SCHEMA_VERSION'"),
      "schema 4.1.0");
}

// A hostile export cannot make a query run without bound: a view standing in
// for a table (here one that would count forever) is refused before it runs.
TEST(NsysImportTest, AViewInPlaceOfATableIsRefused) {
  const std::string path =
      Damaged("view.sqlite",
              "DROP TABLE StringIds; CREATE VIEW StringIds AS WITH RECURSIVE "
              "n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n) SELECT id, "
              "'x' AS value FROM n");
  ExpectOneLineError(path, "StringIds is a view, not a table");
}

}  // namespace
}  // namespace et::convert
