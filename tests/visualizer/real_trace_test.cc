// End-to-end tests of et-viz on real traces converted by
// et::convert::ConvertFile: nn_demo (PyTorch 1.13 CPU, with its Kineto-style
// trace for times) and resnet_1gpu (PARAM, ET 1.1.1, GPU). Renders every format
// and checks the files with independent tools (pdfinfo, xmllint) and the CLI's
// errors. Tools that are not installed skip their checks (CI installs graphviz,
// poppler-utils and libxml2-utils).
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/gzip_input.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "visualizer/dot_renderer.h"
#include "visualizer/dot_writer.h"
#include "visualizer/graph_export.h"
#include "visualizer/graph_filter.h"
#include "visualizer/page_layout.h"
#include "visualizer/printed_pages.h"
#include "visualizer/rank_traces.h"
#include "visualizer/repeat_folding.h"
#include "visualizer/timeline_writer.h"
#include "visualizer/trace_report.h"
#include "visualizer/viz_graph.h"

namespace et::viz {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool HaveTool(const std::string& name) { return FindProgram(name).ok(); }

int64_t XPathCount(const std::string& file, const std::string& xpath) {
  CommandResult r = RunCommand("xmllint --xpath \"" + xpath + "\" " + file);
  return r.exit_code == 0 ? std::stoll(r.output) : -1;
}

class RealTraceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = ::testing::TempDir() + "/et_viz_real";
    std::system(("mkdir -p " + dir_).c_str());
    const std::string data = ET_TEST_DATA;
    convert::ConvertOptions nn_options;
    nn_options.kineto_path = data + "/pytorch-1.13-cpu/nn_demo_trace.json.gz";
    nn_demo_ = dir_ + "/nn_demo.et";
    auto nn = convert::ConvertFile(
        data + "/pytorch-1.13-cpu/nn_demo_et.json.gz", nn_demo_, nn_options);
    ASSERT_TRUE(nn.ok()) << nn.status();
    convert::ConvertOptions all_options = nn_options;
    all_options.granularity = convert::Granularity::kAll;
    nn_demo_all_ = dir_ + "/nn_demo_all.et";
    auto nn_all =
        convert::ConvertFile(data + "/pytorch-1.13-cpu/nn_demo_et.json.gz",
                             nn_demo_all_, all_options);
    ASSERT_TRUE(nn_all.ok()) << nn_all.status();
    resnet_ = dir_ + "/resnet.et";
    auto rn = convert::ConvertFile(data + "/param/resnet_1gpu_et.1.1.1.json.gz",
                                   resnet_, convert::ConvertOptions());
    ASSERT_TRUE(rn.ok()) << rn.status();
  }

  static std::vector<RankTrace> Load(const std::string& path) {
    auto traces = LoadRankTraces({path});
    EXPECT_TRUE(traces.ok()) << traces.status();
    return traces.ok() ? std::move(*traces) : std::vector<RankTrace>{};
  }

  static std::string dir_, nn_demo_, nn_demo_all_, resnet_;
};
std::string RealTraceTest::dir_, RealTraceTest::nn_demo_,
    RealTraceTest::nn_demo_all_, RealTraceTest::resnet_;

// Every format from one selection; the files are checked with independent
// tools.
void RenderAndCheckEveryFormat(const std::vector<RankTrace>& traces,
                               const NodeFilter& filter,
                               const std::string& stem) {
  auto sel = SelectNodes(traces, filter);
  ASSERT_TRUE(sel.ok()) << sel.status();
  VizGraph g = BuildVizGraph(traces, *sel);
  ASSERT_TRUE(CheckDrawingSize(g, traces, filter, kDefaultMaxDrawnNodes).ok());
  const int64_t nodes = static_cast<int64_t>(g.nodes.size());
  const int64_t edges = static_cast<int64_t>(g.edges.size());

  // DOT: every selected node of the trace, found by reading the trace itself.
  ASSERT_TRUE(ExportGraph(g, stem + ".dot", {}).ok());
  std::string dot;
  ASSERT_TRUE(ReadFileMaybeGzip(stem + ".dot", &dot).ok());
  int64_t expected_nodes = 0;
  for (NodeIndex i = 0; i < traces[0].model.size(); ++i) {
    if (!(*sel)[0].shown[i]) continue;
    ++expected_nodes;
    const std::string key =
        "\"r0_" + std::to_string(traces[0].model.id(i)) + "\" [";
    EXPECT_NE(dot.find(key), std::string::npos) << key;
  }
  EXPECT_EQ(expected_nodes, nodes);

  // GraphML and JSON need no Graphviz.
  ASSERT_TRUE(ExportGraph(g, stem + ".graphml", {}).ok());
  ASSERT_TRUE(ExportGraph(g, stem + ".json", {}).ok());
  std::string json_text;
  ASSERT_TRUE(ReadFileMaybeGzip(stem + ".json", &json_text).ok());
  auto json = nlohmann::json::parse(json_text);
  EXPECT_EQ(static_cast<int64_t>(json["nodes"].size()), nodes);
  EXPECT_EQ(static_cast<int64_t>(json["links"].size()), edges);
  if (HaveTool("xmllint")) {
    EXPECT_EQ(RunCommand("xmllint --noout " + stem + ".graphml").exit_code, 0);
    EXPECT_EQ(XPathCount(stem + ".graphml", "count(//*[local-name()='node'])"),
              nodes);
    EXPECT_EQ(XPathCount(stem + ".graphml", "count(//*[local-name()='edge'])"),
              edges);
  }

  if (!HaveTool("dot")) GTEST_SKIP() << "Graphviz dot not installed";
  // Every format on one sheet (printed pages: ALargeStepIsDrawnOnPrintedPages);
  // files of an earlier run are removed so that none stands in for the output.
  ExportOptions one_sheet;
  one_sheet.split_pages = false;
  for (const char* ext : {".svg", ".pdf", ".png"}) {
    std::filesystem::remove(stem + ext);
    ASSERT_TRUE(ExportGraph(g, stem + ext, one_sheet).ok()) << ext;
  }
  if (HaveTool("xmllint")) {
    EXPECT_EQ(RunCommand("xmllint --noout " + stem + ".svg").exit_code, 0);
    // Each node with edges from another page column gains a connector box.
    const DrawnSize drawn = DrawnSizeOf(g);
    EXPECT_EQ(XPathCount(stem + ".svg", "count(//*[@class='node'])"),
              static_cast<int64_t>(drawn.nodes));
    EXPECT_EQ(XPathCount(stem + ".svg", "count(//*[@class='edge'])"),
              static_cast<int64_t>(drawn.edges));
  }
  if (HaveTool("pdfinfo")) {
    CommandResult info = RunCommand("pdfinfo " + stem + ".pdf");
    EXPECT_EQ(info.exit_code, 0) << info.output;
    const size_t at = info.output.find("Pages:");
    ASSERT_NE(at, std::string::npos) << info.output;
    EXPECT_GE(std::atoi(info.output.c_str() + at + 6), 1) << info.output;
  }
  std::string png;
  ASSERT_TRUE(ReadFileMaybeGzip(stem + ".png", &png).ok());
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST_F(RealTraceTest, NnDemoRendersToEveryFormat) {
  auto traces = Load(nn_demo_);
  ASSERT_EQ(traces.size(), 1u);
  RenderAndCheckEveryFormat(traces, {}, dir_ + "/nn_demo");
}

TEST_F(RealTraceTest, NnDemoAllOpsCollapsedToDepth2) {
  auto traces = Load(nn_demo_all_);
  NodeFilter f;
  f.max_depth = 3;
  f.collapse = true;
  RenderAndCheckEveryFormat(traces, f, dir_ + "/nn_demo_depth3");
}

TEST_F(RealTraceTest, ResnetFilteredRendersToEveryFormat) {
  auto traces = Load(resnet_);
  NodeFilter f;
  ASSERT_TRUE(ParseNodeTypes("collective", &f).ok());
  RenderAndCheckEveryFormat(traces, f, dir_ + "/resnet_collectives");
  f = {};
  f.name_pattern = "^aten::(conv|batch_norm|relu)";
  ASSERT_TRUE(ParseIdRange(":2000", &f).ok());
  RenderAndCheckEveryFormat(traces, f, dir_ + "/resnet_convs");
}

TEST_F(RealTraceTest, ResnetWithoutFilterHitsTheSizeLimit) {
  auto traces = Load(resnet_);
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  VizGraph g = BuildVizGraph(traces, *sel);
  EXPECT_GT(g.nodes.size(), 2000u);
  absl::Status s = CheckDrawingSize(g, traces, {}, kDefaultMaxDrawnNodes);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("--ids"), std::string::npos) << s;
  // And through the CLI: non-zero exit, one error line, no output file.
  const std::string out = dir_ + "/resnet_all.pdf";
  CommandResult r =
      RunCommand(std::string(ET_VIZ_BINARY) + " " + resnet_ + " -o " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.output.rfind("et-viz: error: " + out + ": the graph to draw has", 0),
      0u)
      << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1);
  EXPECT_EQ(std::fopen(out.c_str(), "r"), nullptr);
}

// Rank 0 of the 2-rank gpt recording (tests/data/recorded), with its Kineto
// trace, converted to `out`.
absl::Status ConvertGptRank0(const std::string& out) {
  convert::ConvertOptions options;
  options.kineto_path =
      std::string(ET_TEST_DATA) + "/recorded/ddp_gpt_2r_kineto_r0.json.gz";
  return convert::ConvertFile(
             std::string(ET_TEST_DATA) + "/recorded/ddp_gpt_2r_et_r0.json.gz",
             out, options)
      .status();
}

// The refusal's --step hint is a command that draws on the first try: the
// gpt recording's three steps together are too large (1,323 nodes, about
// 26,800 layout units), each alone fits (440 nodes, about 3,000 units: dot
// lays one out in 2.8 s of CPU; the estimate once counted edges between page
// columns too and refused it at 13,045), so the hint names them.
TEST_F(RealTraceTest, TheStepHintOfARefusalFitsOnTheFirstTry) {
  const std::string gpt = dir_ + "/gpt_r0.et";
  ASSERT_TRUE(ConvertGptRank0(gpt).ok());
  auto traces = Load(gpt);
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  absl::Status refused = CheckDrawingSize(BuildVizGraph(traces, *sel), traces,
                                          {}, kDefaultMaxDrawnNodes);
  ASSERT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  const std::string message(refused.message());
  const size_t at = message.find("--step N (");
  ASSERT_NE(at, std::string::npos) << message;
  int64_t step = 0, nodes = 0;
  ASSERT_EQ(std::sscanf(message.c_str() + at, "--step N (%ld: %ld nodes", &step,
                        &nodes),
            2)
      << message;
  EXPECT_EQ(message.find("too large"), std::string::npos) << message;
  NodeFilter hinted;
  hinted.step = step;
  auto narrowed = SelectNodes(traces, hinted);
  ASSERT_TRUE(narrowed.ok()) << narrowed.status();
  EXPECT_EQ(narrowed->front().shown_count, nodes);
  EXPECT_TRUE(CheckDrawingSize(BuildVizGraph(traces, *narrowed), traces, hinted,
                               kDefaultMaxDrawnNodes)
                  .ok());
}

// Repeat folding on the 2-rank gpt recording (rank 0, step 1): the 18
// parameters' optimizer ops, zero_ and the gradient bucket copies repeat. The
// step drawn in full does not fit a page (5 columns); folded, it is less than
// half the nodes and layout units, every folded node is counted, and the runs
// that hold aten::addcdiv_ (one per parameter) stand for exactly as many as
// the step has.
TEST_F(RealTraceTest, RepeatedRunsFoldAStepOntoAPage) {
  const std::string gpt = dir_ + "/gpt_fold_r0.et";
  ASSERT_TRUE(ConvertGptRank0(gpt).ok());
  auto traces = Load(gpt);
  NodeFilter step;
  step.step = 1;
  auto sel = SelectNodes(traces, step);
  ASSERT_TRUE(sel.ok()) << sel.status();
  const VizGraph full = BuildVizGraph(traces, *sel);
  const VizGraph folded = FoldRepeats(full);
  EXPECT_TRUE(ShouldFoldRepeats(full, GraphFormat::kPdf, RepeatMode::kAuto,
                                kDefaultMaxDrawnNodes));
  EXPECT_TRUE(WithinDrawingLimits(folded, kDefaultMaxDrawnNodes));
  EXPECT_LT(folded.nodes.size() * 2, full.nodes.size());
  EXPECT_LT(EstimateLayoutSize(folded) * 2, EstimateLayoutSize(full));
  EXPECT_EQ(folded.nodes.size() + folded.repeat_folded_nodes,
            full.nodes.size());
  int64_t addcdiv_full = 0, addcdiv_represented = 0;
  for (const VizNode& n : full.nodes)
    addcdiv_full += n.name == "aten::addcdiv_";
  for (const VizNode& n : folded.nodes) {
    if (n.name != "aten::addcdiv_") continue;
    addcdiv_represented += n.repeat < 0 ? 1 : folded.repeats[n.repeat].count;
  }
  EXPECT_EQ(addcdiv_full, 18);
  EXPECT_EQ(addcdiv_represented, addcdiv_full);
  // Each run's ids span count x period nodes of the full graph on its track.
  for (const RepeatRun& run : folded.repeats) {
    int64_t in_span = 0;
    for (const VizNode& n : full.nodes) {
      in_span += n.rank == run.rank && n.queue == run.queue &&
                 n.id >= run.first_id && n.id <= run.last_id;
    }
    EXPECT_EQ(in_span, run.count * run.period) << RepeatLabel(run);
  }
  // Through the CLI: the PDF is drawn (folded by default) and says so; the
  // same step kept whole is refused; GraphML keeps every node.
  const std::string pdf = dir_ + "/gpt_step1.pdf";
  CommandResult drawn = RunCommand(std::string(ET_VIZ_BINARY) + " " + gpt +
                                   " --step 1 -o " + pdf);
  if (HaveTool("dot")) {
    EXPECT_EQ(drawn.exit_code, 0) << drawn.output;
    EXPECT_NE(drawn.output.find("repeated nodes folded into"),
              std::string::npos)
        << drawn.output;
  }
  // Kept whole it is drawn too (dot lays it out in seconds), unfolded.
  const std::string kept_dot = dir_ + "/gpt_step1_kept.dot";
  CommandResult kept = RunCommand(std::string(ET_VIZ_BINARY) + " " + gpt +
                                  " --step 1 --repeats keep -o " + kept_dot);
  EXPECT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_EQ(kept.output.find("repeated nodes folded"), std::string::npos)
      << kept.output;
  const std::string graphml = dir_ + "/gpt_step1.graphml";
  CommandResult all = RunCommand(std::string(ET_VIZ_BINARY) + " " + gpt +
                                 " --step 1 -o " + graphml);
  EXPECT_NE(all.output.find("(" + std::to_string(full.nodes.size()) + " nodes"),
            std::string::npos)
      << all.output;
}

// The page columns of each rank, left to right as dot lays them out: the
// column numbers of the clusters "cluster_r<rank>_c<column>" of `dot_file`
// in the order of their left edges, per rank.
std::map<int, std::vector<int>> ColumnsLeftToRight(
    const std::string& dot_file) {
  CommandResult laid = RunCommand("dot -Tjson " + dot_file);
  EXPECT_EQ(laid.exit_code, 0) << laid.output.substr(0, 500);
  std::map<int, std::vector<std::pair<double, int>>> by_x;
  const nlohmann::json layout = nlohmann::json::parse(laid.output);
  for (const auto& object : layout["objects"]) {
    int rank = 0, column = 0;
    char tail = 0;
    const std::string name = object.value("name", "");
    if (std::sscanf(name.c_str(), "cluster_r%d_c%d%c", &rank, &column, &tail) !=
        2)
      continue;
    by_x[rank].push_back({std::stod(object.value("bb", "0")), column});
  }
  std::map<int, std::vector<int>> out;
  for (auto& [rank, columns] : by_x) {
    std::sort(columns.begin(), columns.end());
    for (const auto& [x, column] : columns) out[rank].push_back(column);
  }
  return out;
}

// Converts ranks 0..count-1 of `recording` (under tests/data: its
// `_et_r<r>.json.gz` and `_kineto_r<r>.json.gz`) to `out_prefix_r<r>.et`;
// returns the outputs, each after a space.
std::string ConvertRanks(const std::string& recording, int count,
                         const std::string& out_prefix) {
  const std::string data = std::string(ET_TEST_DATA) + "/" + recording;
  std::string outputs;
  for (int r = 0; r < count; ++r) {
    convert::ConvertOptions options;
    options.kineto_path = absl::StrCat(data, "_kineto_r", r, ".json.gz");
    const std::string out = absl::StrCat(out_prefix, "_r", r, ".et");
    EXPECT_TRUE(convert::ConvertFile(absl::StrCat(data, "_et_r", r, ".json.gz"),
                                     out, options)
                    .ok())
        << out;
    absl::StrAppend(&outputs, " ", out);
  }
  return outputs;
}

// A step folded into page columns reads left to right: part 1, 2, 3, ...
// dot orders clusters to reduce crossings, and the edges from one column's
// foot to the next one's head once laid the gpt step out as parts 1, 3, 2 and
// the tensor-parallel ranks as 4, 3, 1, 2 inside each rank.
TEST_F(RealTraceTest, PageColumnsRunLeftToRight) {
  if (!HaveTool("dot")) GTEST_SKIP() << "Graphviz dot not installed";
  const std::string gpt = dir_ + "/gpt_columns_r0.et";
  ASSERT_TRUE(ConvertGptRank0(gpt).ok());
  const std::string tp_ranks =
      ConvertRanks("recorded/tp_dp_4r", 2, dir_ + "/tp_columns");
  // PyTorch 2.11's tp=2 x dp=2 on 4 ranks (tests/data/torch2-cpu).
  const std::string tp_dp_ranks =
      ConvertRanks("torch2-cpu/tp2dp2", 4, dir_ + "/tp2dp2_columns");
  for (const auto& [inputs, ranks] :
       std::vector<std::pair<std::string, size_t>>{
           {gpt, 1}, {tp_ranks, 2}, {tp_dp_ranks, 4}}) {
    const std::string dot = dir_ + "/columns.dot";
    CommandResult drawn = RunCommand(std::string(ET_VIZ_BINARY) + " " + inputs +
                                     " --step 1 -o " + dot);
    ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
    const std::map<int, std::vector<int>> columns = ColumnsLeftToRight(dot);
    ASSERT_EQ(columns.size(), ranks) << inputs;
    // No line runs between columns (they once took more than half the gpt
    // page's width): each column's inputs from others come in through
    // off-page connectors; only the collective links between ranks remain.
    std::string text;
    ASSERT_TRUE(ReadFileMaybeGzip(dot, &text).ok());
    size_t unranked = 0, connectors = 0;
    for (size_t at = text.find("constraint=false"); at != std::string::npos;
         at = text.find("constraint=false", at + 1))
      ++unranked;
    for (size_t at = text.find("[label=\"from #"); at != std::string::npos;
         at = text.find("[label=\"from #", at + 1))
      ++connectors;
    EXPECT_GT(connectors, 0u) << inputs;
    if (ranks == 1) {
      EXPECT_EQ(unranked, 0u) << inputs;
    }
    // And it draws: Graphviz 2.43's spline router fails on a collective link
    // of the 4-rank step, which is then drawn with straight lines.
    CommandResult pdf = RunCommand(std::string(ET_VIZ_BINARY) + " " + inputs +
                                   " --step 1 -o " + dir_ + "/columns.pdf");
    EXPECT_EQ(pdf.exit_code, 0) << pdf.output;
    for (const auto& [rank, order] : columns) {
      ASSERT_GE(order.size(), 3u) << inputs << " rank " << rank;
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()))
          << inputs << " rank " << rank << ": columns left to right "
          << absl::StrJoin(order, ", ");
    }
  }
}

// Every node of a drawing split over pages is on one page, and every drawn
// edge is drawn once: as a line on its page, or in the off-page connector on
// its target's page.
void ExpectPagesKeepEverything(const VizGraph& g, const PagePlan& plan) {
  size_t nodes = 0, edges = 0, connectors = 0;
  for (int32_t p = 0; p < plan.pages; ++p) {
    const DrawnSize page = DrawnSizeOf(g, &plan, p);
    // Each connector is one node and one edge more on its page.
    const std::string dot = WriteDot(g, {"t", &plan, p});
    size_t boxes = 0;
    for (size_t at = dot.find("[label=\"from #"); at != std::string::npos;
         at = dot.find("[label=\"from #", at + 1))
      ++boxes;
    nodes += page.nodes - boxes;
    edges += page.edges - boxes + page.connector_edges;
    connectors += boxes;
  }
  EXPECT_EQ(nodes, g.nodes.size());
  EXPECT_EQ(edges, DrawnEdgeCount(g));
  EXPECT_GT(connectors, 0u);
}

// A step too large for a printed page is drawn on several: the gpt step was
// one sheet of 26.4 x 37.8 in (9 pt labels at 2 pt on Letter), the 4 ranks of
// the 2.11 tp=2 x dp=2 step one of 123.5 x 18.4 in. Each page now prints on
// Letter/A4 with its labels at 6 pt or more, and nothing is dropped.
TEST_F(RealTraceTest, ALargeStepIsDrawnOnPrintedPages) {
  if (!HaveTool("dot") || !HaveTool("pdfinfo") || !HaveTool("pdfunite"))
    GTEST_SKIP() << "Graphviz dot or poppler-utils not installed";
  const std::string gpt = dir_ + "/gpt_pages_r0.et";
  ASSERT_TRUE(ConvertGptRank0(gpt).ok());
  const std::string tp_dp_ranks =
      ConvertRanks("torch2-cpu/tp2dp2", 4, dir_ + "/tp2dp2_pages");
  for (const std::string& inputs : {" " + gpt, tp_dp_ranks}) {
    const std::string pdf = dir_ + "/pages.pdf";
    CommandResult drawn =
        RunCommand(std::string(ET_VIZ_BINARY) + inputs + " --step 1 -o " + pdf);
    ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
    EXPECT_NE(drawn.output.find("edges between pages as off-page connectors"),
              std::string::npos)
        << drawn.output;
    CommandResult info = RunCommand("pdfinfo -f 1 -l 999 " + pdf);
    ASSERT_EQ(info.exit_code, 0) << info.output;
    int pages = 0, sized = 0;
    std::sscanf(info.output.substr(info.output.find("Pages:")).c_str(),
                "Pages: %d", &pages);
    EXPECT_GE(pages, 2) << inputs;
    // The pages' sizes as pdfinfo reads them are the ones et-viz says (the
    // widest and the tallest, to the 0.1 in printed) and fit the page.
    double widest_in = 0, tallest_in = 0;
    for (absl::string_view line : absl::StrSplit(info.output, '\n')) {
      double w = 0, h = 0;
      int page = 0;
      if (std::sscanf(std::string(line).c_str(), "Page %d size: %lf x %lf",
                      &page, &w, &h) != 3)
        continue;
      EXPECT_TRUE(FitsPrintedPage(w / 72, h / 72))
          << inputs << ": page " << sized + 1 << " " << w << " x " << h
          << " pt";
      widest_in = std::max(widest_in, w / 72);
      tallest_in = std::max(tallest_in, h / 72);
      ++sized;
    }
    EXPECT_EQ(sized, pages);
    double said_w_in = 0, said_h_in = 0;
    const size_t at_most = drawn.output.find("pages of at most ");
    ASSERT_NE(at_most, std::string::npos) << drawn.output;
    ASSERT_EQ(
        std::sscanf(drawn.output.c_str() + at_most,
                    "pages of at most %lf x %lf in", &said_w_in, &said_h_in),
        2);
    EXPECT_NEAR(said_w_in, widest_in, 0.06) << drawn.output;
    EXPECT_NEAR(said_h_in, tallest_in, 0.06) << drawn.output;
    // One page when asked, of the old size.
    CommandResult one = RunCommand(std::string(ET_VIZ_BINARY) + inputs +
                                   " --step 1 --pages one -o " + pdf);
    ASSERT_EQ(one.exit_code, 0) << one.output;
    EXPECT_NE(RunCommand("pdfinfo " + pdf).output.find("Pages:           1"),
              std::string::npos);
  }
  // SVG, a screen's format: one zoomable drawing by default (issue 48, item
  // 9: an 80-node graph given -o g.svg wrote g-p1.svg .. g-p5.svg, no g.svg).
  const std::string svg = dir_ + "/gpt_pages.svg";
  std::remove(svg.c_str());
  CommandResult whole = RunCommand(std::string(ET_VIZ_BINARY) + " " + gpt +
                                   " --step 1 -o " + svg);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  FILE* one_svg = std::fopen(svg.c_str(), "r");
  EXPECT_NE(one_svg, nullptr) << whole.output;
  if (one_svg != nullptr) std::fclose(one_svg);
  EXPECT_EQ(whole.output.find("-p1.svg"), std::string::npos) << whole.output;
  // Pages when asked: one file per page, named after the output.
  std::remove(svg.c_str());
  CommandResult drawn = RunCommand(std::string(ET_VIZ_BINARY) + " " + gpt +
                                   " --step 1 --pages split -o " + svg);
  ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
  EXPECT_NE(drawn.output.find(dir_ + "/gpt_pages-p1.svg .. "),
            std::string::npos)
      << drawn.output;
  EXPECT_EQ(std::fopen(svg.c_str(), "r"), nullptr);
  std::string page;
  EXPECT_TRUE(ReadFileMaybeGzip(dir_ + "/gpt_pages-p2.svg", &page).ok());
  EXPECT_NE(page.find("page 2 of "), std::string::npos);
  // --pages means something only for a drawing.
  CommandResult dot = RunCommand(std::string(ET_VIZ_BINARY) + " " + gpt +
                                 " --pages one -o " + dir_ + "/x.graphml");
  EXPECT_EQ(dot.exit_code, 2) << dot.output;
}

// The same, through the library: each node on one page, each edge once.
TEST_F(RealTraceTest, PagesKeepEveryNodeAndEdge) {
  const std::string gpt = dir_ + "/gpt_pages_lib_r0.et";
  ASSERT_TRUE(ConvertGptRank0(gpt).ok());
  const std::string tp_dp_ranks =
      ConvertRanks("torch2-cpu/tp2dp2", 4, dir_ + "/tp2dp2_pages_lib");
  std::vector<std::string> tp_dp =
      absl::StrSplit(absl::StripLeadingAsciiWhitespace(tp_dp_ranks), ' ');
  for (const std::vector<std::string>& inputs :
       {std::vector<std::string>{gpt}, tp_dp}) {
    auto traces = LoadRankTraces(inputs);
    ASSERT_TRUE(traces.ok()) << traces.status();
    NodeFilter filter;
    filter.step = 1;
    auto sel = SelectNodes(*traces, filter);
    ASSERT_TRUE(sel.ok()) << sel.status();
    const VizGraph g = FoldRepeats(BuildVizGraph(*traces, *sel));
    const NodeLayers layers = LayerNodes(g);
    for (int64_t layers_per_column : {4, 20}) {
      for (int32_t columns_per_page : {1, 2}) {
        const PagePlan plan = PlanPages(
            g, FoldToLayers(g, layers, layers_per_column), columns_per_page);
        ASSERT_GE(plan.pages, 2);
        ExpectPagesKeepEverything(g, plan);
      }
    }
  }
}

TEST_F(RealTraceTest, BadFiltersGiveClearCliErrors) {
  const std::string viz = std::string(ET_VIZ_BINARY) + " " + nn_demo_;
  struct Case {
    std::string args;
    std::string message;
    int exit_code;  // 2: usage (the flags alone are wrong); 1: the inputs
  };
  const std::vector<Case> cases = {
      {"--name '(' -o x.dot",
       "et-viz: error: --name '(': invalid regular expression", 2},
      {"--step 9 --report",
       "et-viz: error: --step 9: no node named ProfilerStep#9", 1},
      {"--type kernels --report",
       "et-viz: error: --type 'kernels': unknown type", 2},
      {"--ids 50:10 --report",
       "et-viz: error: --ids '50:10': the range is empty", 2},
      {"--rank 2 --report", "et-viz: error: --rank 2: no input has rank 2", 1},
      {"--depth -1 --report",
       "et-viz: error: --depth '-1': expected an integer >= 0", 2},
      {"--name zzz_no_op --report",
       "et-viz: error: the filters select none of the", 1},
      {"graph.pdf", "et-viz: error: graph.pdf: looks like an output file", 2},
      {"--frobnicate 1", "et-viz: error: unknown flag --frobnicate", 2},
      {"-o x.jpeg", "et-viz: error: x.jpeg: unknown output format", 2},
      {"-o x.svg --dot /nonexistent/dot", "not found on PATH; install Graphviz",
       1},
  };
  for (const Case& c : cases) {
    CommandResult r = RunCommand(viz + " " + c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args;
    EXPECT_NE(r.output.find(c.message), std::string::npos)
        << c.args << ": " << r.output;
  }
}

TEST_F(RealTraceTest, ReportTotalsEqualTheSumOfNodeDurations) {
  for (const std::string& path : {nn_demo_, nn_demo_all_, resnet_}) {
    auto traces = Load(path);
    auto sel = SelectNodes(traces, {});
    ASSERT_TRUE(sel.ok());
    TraceReport r = BuildReport(traces, *sel, {});
    // Independently from the protobuf nodes (not the node model et-viz reads):
    // the exact duration attr, else whole microseconds.
    auto graph = LoadGraph(path);
    ASSERT_TRUE(graph.ok()) << graph.status();
    int64_t sum_ns = 0;
    int64_t sum_inclusive_ns = 0;
    for (const auto& n : graph->nodes()) {
      const int64_t ns =
          GetInt(n, attr::kDurationNs)
              .value_or(static_cast<int64_t>(n.duration_micros()) * 1000);
      sum_ns += ns;
      sum_inclusive_ns += GetInt(n, attr::kInclusiveDurNs).value_or(ns);
    }
    EXPECT_EQ(r.total_duration_ns, sum_ns) << path;
    EXPECT_EQ(r.nodes, static_cast<int64_t>(graph->size()));
    int64_t total = 0;
    int64_t self = 0;
    for (const auto& op : r.ops) {
      total += op.total_ns;
      self += op.self_ns;
    }
    EXPECT_EQ(total, sum_inclusive_ns) << path;
    EXPECT_EQ(self, r.total_self_ns) << path;
    if (path == nn_demo_) {
      // Converted with its trace: times are recorded, and no op has nested op
      // nodes in the default granularity, so self time is the whole recorded
      // time.
      EXPECT_GT(sum_ns, 0);
      EXPECT_EQ(r.total_self_ns, sum_ns);
    }
  }
}

TEST_F(RealTraceTest, ResnetReportCountsItsCollectives) {
  auto traces = Load(resnet_);
  auto graph = LoadGraph(resnet_);  // the protobuf nodes, read independently
  ASSERT_TRUE(graph.ok()) << graph.status();
  int64_t collectives = 0;
  for (const auto& n : graph->nodes()) {
    collectives += n.type() == ChakraProtoMsg::COMM_COLL_NODE;
  }
  ASSERT_GT(collectives, 0);
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  TraceReport r = BuildReport(traces, *sel, {});
  int64_t reported = 0;
  for (const auto& c : r.collectives) reported += c.calls;
  EXPECT_EQ(reported, collectives);
}

// gloo's collectives run on host tensors: drawn and reported as CPU ops;
// NCCL's (resnet, on device tensors) stay GPU ops.
TEST_F(RealTraceTest, GlooCollectivesAreCpuOpsAndNcclOnesGpuOps) {
  const std::string ddp = dir_ + "/ddp_mlp_r0.et";
  auto converted = convert::ConvertFile(
      std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz",
      ddp, convert::ConvertOptions());
  ASSERT_TRUE(converted.ok()) << converted.status();
  for (const auto& [path, want] :
       {std::pair{ddp, Device::kCpu}, std::pair{resnet_, Device::kGpu}}) {
    auto traces = Load(path);
    ASSERT_EQ(traces.size(), 1u);
    const NodeModel& m = traces[0].model;
    int64_t collectives = 0;
    for (NodeIndex i = 0; i < m.size(); ++i) {
      if (KindOf(m, i) != DrawKind::kCollective) continue;
      ++collectives;
      EXPECT_EQ(DeviceOf(m, i), want) << path << " node " << m.id(i);
    }
    EXPECT_GT(collectives, 0) << path;
  }
}

// A tp=2 x dp=2 recording (tests/data/tp-dp, each collective marked with its
// group): rank 0's activation all-reduces are drawn and reported on its
// tensor-parallel group "1", its DDP buckets on its data-parallel group "3"
// (named as the trace names them, not by their position in its table), and
// none on every rank.
TEST_F(RealTraceTest, TensorAndDataParallelCollectivesOnTheirGroups) {
  const std::string tp = dir_ + "/tp2dp2_r0.et";
  auto converted = convert::ConvertFile(
      std::string(ET_TEST_DATA) + "/tp-dp/tp2dp2_et_r0.json.gz", tp,
      convert::ConvertOptions());
  ASSERT_TRUE(converted.ok()) << converted.status();
  auto traces = Load(tp);
  ASSERT_EQ(traces.size(), 1u);
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  TraceReport r = BuildReport(traces, *sel, {});
  std::map<std::string, int64_t> calls_by_group;
  for (const auto& c : r.collectives) calls_by_group[c.pg_name] += c.calls;
  EXPECT_EQ(calls_by_group,
            (std::map<std::string, int64_t>{{"1", 6}, {"3", 2}}));
  std::set<std::string> tracks;
  for (const auto& t : r.tracks) tracks.insert(t.track);
  EXPECT_EQ(tracks.count("comm group 1"), 1u);
  EXPECT_EQ(tracks.count("comm group 3"), 1u);
  EXPECT_EQ(tracks.count("comm group <all>"), 0u);
  const std::string dot = WriteDot(BuildVizGraph(traces, *sel), {});
  EXPECT_NE(dot.find("label=\"comm group 3\""), std::string::npos);
}

TEST_F(RealTraceTest, NnDemoTimelineHasAnEventPerTimedNode) {
  auto traces = Load(nn_demo_);
  auto graph = LoadGraph(nn_demo_);  // the protobuf nodes, read independently
  ASSERT_TRUE(graph.ok()) << graph.status();
  int64_t timed = 0;
  for (const auto& n : graph->nodes()) {
    timed +=
        n.start_time_micros() != 0 || GetInt(n, attr::kStartNs).has_value();
  }
  ASSERT_GT(timed, 0);
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  const std::string path = dir_ + "/nn_demo_timeline.json";
  auto summary = WriteTimelineFile(traces, *sel, path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  std::string text;
  ASSERT_TRUE(ReadFileMaybeGzip(path, &text).ok());
  auto json = nlohmann::json::parse(text);
  int64_t complete = 0;
  std::set<std::string> tracks;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "X") ++complete;
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      tracks.insert(e["args"]["name"].get<std::string>());
    }
  }
  EXPECT_EQ(complete, timed);
  EXPECT_EQ(tracks, (std::set<std::string>{"thread 1"}));
}

// Every suggestion of a refusal draws the node count it names, through the
// CLI (its folding of repeats included): on HTA's NCCL trace (Kineto alone)
// the "--step 4 --depth 0 --collapse (832 nodes)" once drew 1,492 (issue 48).
TEST_F(RealTraceTest, EverySuggestedFilterDrawsWhatItNames) {
  const std::string data = ET_TEST_DATA;
  const std::string et = dir_ + "/hta_nccl.et";
  ASSERT_TRUE(convert::ConvertFile(data + "/public/hta_nccl_data.json.gz", et,
                                   convert::ConvertOptions())
                  .ok());
  CommandResult refused = RunCommand(std::string(ET_VIZ_BINARY) + " " + et +
                                     " -o " + dir_ + "/nccl_all.svg");
  ASSERT_EQ(refused.exit_code, 1) << refused.output;
  // "narrow it with A (N nodes...), B (N nodes), ...; or raise"
  const size_t from = refused.output.find("narrow it with ");
  const size_t to = refused.output.find("; or raise");
  ASSERT_NE(from, std::string::npos) << refused.output;
  absl::string_view hints =
      absl::string_view(refused.output).substr(from + 15, to - from - 15);
  int checked = 0;
  while (!hints.empty()) {
    const size_t open = hints.find(" (");
    if (open == absl::string_view::npos) break;
    const std::string flags(hints.substr(0, open));
    long nodes = 0;  // NOLINT: sscanf's %ld
    absl::string_view count = hints.substr(open + 2);
    absl::ConsumePrefix(&count, "its first ");
    ASSERT_EQ(std::sscanf(std::string(count).c_str(), "%ld node", &nodes), 1)
        << flags;
    // Past this hint's parentheses (they nest no deeper than one level).
    size_t close = open + 2, depth = 1;
    for (; close < hints.size() && depth > 0; ++close) {
      depth += hints[close] == '(' ? 1 : hints[close] == ')' ? -1 : 0;
    }
    hints.remove_prefix(std::min(hints.size(), close));
    absl::ConsumePrefix(&hints, ", ");
    CommandResult drawn =
        RunCommand(absl::StrCat(ET_VIZ_BINARY, " ", et, " ", flags, " -o ",
                                dir_, "/nccl_hint", checked, ".svg"));
    ASSERT_EQ(drawn.exit_code, 0) << flags << ": " << drawn.output;
    EXPECT_NE(drawn.output.find(absl::StrCat("(", nodes, " node")),
              std::string::npos)
        << flags << ": " << drawn.output;
    ++checked;
  }
  EXPECT_GE(checked, 2) << refused.output;  // a step and an id range
}

}  // namespace
}  // namespace et::viz
