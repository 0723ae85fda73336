// et-viz: draws Chakra .et graphs (DOT, PDF, SVG, PNG, GraphML, JSON), prints
// where the time goes (--report), and writes Chrome/Perfetto timelines
// (--timeline). Flags are parsed here only, into Options; the work is in the
// et_visualizer library.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/atomic_output_file.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "base/text_escape.h"
#include "cli/cli_args.h"
#include "cli/flag_use.h"
#include "proto/graph_json.h"
#include "visualizer/graph_export.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/repeat_folding.h"
#include "visualizer/timeline_writer.h"
#include "visualizer/trace_diff.h"
#include "visualizer/trace_diff_page.h"
#include "visualizer/trace_report.h"
#include "visualizer/trace_report_page.h"
#include "visualizer/viz_graph.h"

ABSL_FLAG(std::string, o, "",
          "draw the graph; the extension picks the format: .dot, .pdf, .svg, "
          ".png (through "
          "Graphviz's `dot`), .graphml, .json (networkx node-link)");
ABSL_FLAG(std::string, output, "", "same as -o");
ABSL_FLAG(bool, report, false,
          "print ops by self/total time, communication, busy time per track "
          "(the default "
          "when no output is given)");
ABSL_FLAG(bool, json, false, "print the report as JSON instead of a table");
ABSL_FLAG(bool, diff, false,
          "BEFORE AFTER: compare two recordings of one program: self time "
          "side by side, the ops that appeared, vanished or moved most, "
          "communication (text, or --json)");
ABSL_FLAG(std::string, html, "",
          "with --report: also write it as one self-contained HTML page "
          "(docs/html-report.md)");
ABSL_FLAG(std::string, timeline, "",
          "write a Chrome/Perfetto trace of the recorded times");
ABSL_FLAG(std::string, raw_json, "",
          "write the whole .et (one input) as protobuf JSON");
ABSL_FLAG(std::string, ids, "",
          "filter: node ids A:B inclusive (A:, :B and A also work)");
ABSL_FLAG(std::string, name, "", "filter: names matching this RE2 regex");
ABSL_FLAG(
    std::string, type, "",
    "filter: compute, collective, sendrecv, comm, memory, metadata, cpu, gpu");
ABSL_FLAG(std::string, rank, "", "filter: ranks, e.g. 0,2-3");
// Integers with their own validation are read as text (an unset flag is empty).
ABSL_FLAG(std::string, step, "", "filter: the ops of ProfilerStep#N");
ABSL_FLAG(std::string, depth, "",
          "filter: ops nested at most D deep (0 = top level)");
ABSL_FLAG(bool, collapse, false,
          "draw hidden ops as part of their nearest shown ancestor");
ABSL_FLAG(std::string, max_nodes, "2000",
          "refuse drawings above N nodes (0 = no limit)");
ABSL_FLAG(std::string, repeats, "auto",
          "repeated runs of ops (layers, optimizer steps): fold = draw one "
          "instance marked x N, keep = draw all, auto = fold .pdf/.svg/.png "
          "drawings that do not fit a page as they are");
ABSL_FLAG(std::string, pages, "auto",
          "drawings (.pdf/.svg/.png): auto = a PDF that would not print "
          "readably on a Letter/A4 page is split over several, an SVG or PNG "
          "(a screen's, zoomable) is one drawing; split = split any drawing "
          "(NAME-p1.svg, ... for SVG/PNG); one = a single page of any size");
ABSL_FLAG(std::string, dot, "",
          "the Graphviz program (default: `dot` on PATH)");
ABSL_FLAG(bool, by_shape, false,
          "group report rows by input shapes as well as by name");
ABSL_FLAG(std::string, top, "25", "report rows to print (0 = all)");

namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string graph_output;
  std::string timeline_output;
  std::string raw_json_output;
  std::string html_output;
  bool report = false;
  bool report_json = false;
  bool diff = false;
  bool by_shape = false;
  int top = 25;
  et::viz::NodeFilter filter;
  et::viz::ExportOptions export_options;
  et::viz::RepeatMode repeats = et::viz::RepeatMode::kAuto;
};

absl::Status ParseInt(const std::string& flag, const std::string& text,
                      int64_t min, int64_t* value) {
  if (!absl::SimpleAtoi(text, value) || *value < min) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s '%s': expected an integer >= %d", flag, text, min));
  }
  return absl::OkStatus();
}

// A positional argument named like an output (.pdf, .json that does not
// exist, ...). A file that does not exist yet is a stray output name (`et-viz
// a.et graph.pdf`); one that exists is an input of the wrong kind, and -o
// would overwrite it.
absl::Status NotAnInput(const std::string& arg) {
  if (access(arg.c_str(), F_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: looks like an output file, not a .et input; did you mean -o %s?",
        arg, arg));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: not a .et input (et-viz reads converted traces and writes a "
      "drawing only with -o)",
      arg));
}

absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& positional) {
  Options o;
  for (size_t k = 1; k < positional.size(); ++k) {
    const std::string arg = positional[k];
    // An existing JSON file is an input of the wrong kind: the reader tells
    // an execution trace from a Kineto trace and says how to convert each.
    const bool existing_json =
        absl::EndsWith(arg, ".json") && access(arg.c_str(), F_OK) == 0;
    if (et::viz::GraphFormatFromPath(arg).ok() && !absl::EndsWith(arg, ".et") &&
        !existing_json) {
      RETURN_IF_ERROR(NotAnInput(arg));
    }
    o.inputs.push_back(arg);
  }
  if (o.inputs.empty())
    return absl::InvalidArgumentError("no input .et file; see --help");
  o.graph_output = absl::GetFlag(FLAGS_o);
  if (o.graph_output.empty()) o.graph_output = absl::GetFlag(FLAGS_output);
  if (!o.graph_output.empty()) {
    // The format is the extension's: a usage error, found before any work.
    RETURN_IF_ERROR(et::viz::GraphFormatFromPath(o.graph_output).status());
  }
  o.timeline_output = absl::GetFlag(FLAGS_timeline);
  o.raw_json_output = absl::GetFlag(FLAGS_raw_json);
  o.report = absl::GetFlag(FLAGS_report);
  o.report_json = absl::GetFlag(FLAGS_json);
  o.html_output = absl::GetFlag(FLAGS_html);
  if (et::FlagGiven("html") && o.html_output.empty())
    return absl::InvalidArgumentError("--html was given an empty value");
  o.by_shape = absl::GetFlag(FLAGS_by_shape);
  o.filter.collapse = absl::GetFlag(FLAGS_collapse);
  if (const std::string ids = absl::GetFlag(FLAGS_ids); !ids.empty()) {
    RETURN_IF_ERROR(et::viz::ParseIdRange(ids, &o.filter));
  }
  if (const std::string type = absl::GetFlag(FLAGS_type); !type.empty()) {
    RETURN_IF_ERROR(et::viz::ParseNodeTypes(type, &o.filter));
  }
  if (const std::string rank = absl::GetFlag(FLAGS_rank); !rank.empty()) {
    ASSIGN_OR_RETURN(o.filter.ranks, et::viz::ParseRankList(rank));
  }
  o.filter.name_pattern = absl::GetFlag(FLAGS_name);
  RETURN_IF_ERROR(et::viz::CheckNamePattern(o.filter.name_pattern));
  int64_t number = 0;
  if (const std::string step = absl::GetFlag(FLAGS_step); !step.empty()) {
    RETURN_IF_ERROR(ParseInt("--step", step, 0, &number));
    o.filter.step = number;
  }
  if (const std::string depth = absl::GetFlag(FLAGS_depth); !depth.empty()) {
    RETURN_IF_ERROR(ParseInt("--depth", depth, 0, &number));
    o.filter.max_depth = static_cast<int32_t>(number);
  }
  RETURN_IF_ERROR(ParseInt("--max-nodes", absl::GetFlag(FLAGS_max_nodes), 0,
                           &o.export_options.max_nodes));
  ASSIGN_OR_RETURN(o.repeats,
                   et::viz::ParseRepeatMode(absl::GetFlag(FLAGS_repeats)));
  // Pages are for paper: a screen's format is one zoomable drawing unless
  // pages are asked for (an 80-node graph given -o g.svg wrote g-p1..p5.svg).
  if (const std::string pages = absl::GetFlag(FLAGS_pages); pages == "one") {
    o.export_options.split_pages = false;
  } else if (pages == "auto") {
    o.export_options.split_pages = absl::EndsWith(o.graph_output, ".pdf");
  } else if (pages != "split") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--pages '%s': expected auto, split or one", pages));
  }
  if (const std::string dot = absl::GetFlag(FLAGS_dot); !dot.empty()) {
    o.export_options.dot_program = dot;
  }
  RETURN_IF_ERROR(ParseInt("--top", absl::GetFlag(FLAGS_top), 0, &number));
  o.top = static_cast<int>(number);
  if (!o.raw_json_output.empty() && o.inputs.size() != 1) {
    return absl::InvalidArgumentError("--raw-json takes exactly one input");
  }
  if (o.report_json) o.report = true;
  if (o.graph_output.empty() && o.timeline_output.empty() &&
      o.raw_json_output.empty()) {
    o.report = true;
  }
  o.diff = absl::GetFlag(FLAGS_diff);
  if (o.diff && o.inputs.size() != 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--diff takes two inputs, BEFORE and AFTER, got %d", o.inputs.size()));
  }
  if (o.diff && (!o.graph_output.empty() || !o.timeline_output.empty() ||
                 !o.raw_json_output.empty())) {
    return absl::InvalidArgumentError(
        "--diff compares two traces only; it does not take -o, --timeline or "
        "--raw-json");
  }
  // Flags that mean something only with an output that uses them: refused
  // without it, not ignored (cli/flag_use.h).
  const bool drawing = absl::EndsWith(o.graph_output, ".pdf") ||
                       absl::EndsWith(o.graph_output, ".svg") ||
                       absl::EndsWith(o.graph_output, ".png");
  const et::FlagUse uses[] = {
      {"by_shape", o.report, "--report (the rows it groups)"},
      {"top", o.report, "--report (the rows it prints)"},
      {"html", o.report || o.diff,
       "--report or --diff (the report it writes as a page)"},
      {"repeats", !o.graph_output.empty(), "-o (the graph it draws)"},
      {"max_nodes", !o.graph_output.empty(), "-o (the graph it draws)"},
      {"collapse", !o.graph_output.empty(),
       "-o (the graph whose hidden ops it folds into their ancestors)"},
      {"dot", drawing, "-o FILE.pdf, .svg or .png (drawn by Graphviz)"},
      {"pages", drawing, "-o FILE.pdf, .svg or .png (a drawing on pages)"},
  };
  et::RefuseUnusedFlags("et-viz", uses);
  return o;
}

// "a.0.et + a.1.et", or "a.0.et + 7 more": file names only, so the title stays
// short.
std::string DrawingTitle(const std::vector<std::string>& inputs) {
  auto base = [](const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  };
  if (inputs.size() <= 2) {
    std::vector<std::string> names;
    for (const std::string& in : inputs) names.push_back(base(in));
    return absl::StrJoin(names, " + ");
  }
  return absl::StrFormat("%s + %d more", base(inputs[0]), inputs.size() - 1);
}

// Writes every requested output, recording each in `written` and its "wrote"
// line in `notes`; Run removes them all if a later one fails, so a run that
// exits non-zero leaves no output (a failed --timeline once left the -o file).
// --diff BEFORE AFTER: each input's report, then the two side by side.
absl::Status RunDiff(const Options& o, std::vector<std::string>* written,
                     std::string* notes) {
  std::vector<et::viz::TraceReport> reports;
  for (const std::string& input : o.inputs) {
    ASSIGN_OR_RETURN(auto traces,
                     et::viz::LoadRankTraces({input}, o.by_shape, false));
    for (const et::viz::RankTrace& trace : traces) {
      for (const std::string& note : trace.model.notes())
        absl::StrAppendFormat(notes, "et-viz: note: %s: %s\n", trace.path,
                              note);
    }
    ASSIGN_OR_RETURN(auto selections, et::viz::SelectNodes(traces, o.filter));
    reports.push_back(et::viz::BuildReport(traces, selections, {o.by_shape}));
  }
  const et::viz::TraceDiff diff = et::viz::DiffReports(reports[0], reports[1]);
  std::cout << (o.report_json ? et::viz::FormatDiffJson(diff)
                              : et::viz::FormatDiffText(diff, o.top));
  if (!o.html_output.empty()) {
    RETURN_IF_ERROR(et::WriteFileAtomically(
        o.html_output, et::viz::TraceDiffPage(diff, o.top)));
    written->push_back(o.html_output);
  }
  return absl::OkStatus();
}

absl::Status RunSteps(const Options& o, std::vector<std::string>* written,
                      std::string* notes) {
  if (o.diff) return RunDiff(o, written, notes);
  if (!o.raw_json_output.empty()) {
    RETURN_IF_ERROR(et::EtToJsonFile(o.inputs[0], o.raw_json_output));
    written->push_back(o.raw_json_output);
  }
  // Only a report by shapes reads the IO table; the rest of et-viz needs the
  // model's columns alone, so the table is not kept for them.
  // The report's memory timeline reads every node's recorded tensors.
  ASSIGN_OR_RETURN(
      auto traces,
      et::viz::LoadRankTraces(o.inputs, o.report && o.by_shape, o.report));
  for (const et::viz::RankTrace& trace : traces) {
    for (const std::string& note : trace.model.notes())
      absl::StrAppendFormat(notes, "et-viz: note: %s: %s\n", trace.path, note);
  }
  ASSIGN_OR_RETURN(auto selections, et::viz::SelectNodes(traces, o.filter));
  if (!o.graph_output.empty()) {
    ASSIGN_OR_RETURN(auto format, et::viz::GraphFormatFromPath(o.graph_output));
    et::viz::VizGraph graph = et::viz::BuildVizGraph(traces, selections);
    if (et::viz::ShouldFoldRepeats(graph, format, o.repeats,
                                   o.export_options.max_nodes)) {
      graph = et::viz::FoldRepeats(graph);
    }
    if (et::viz::IsDrawing(format)) {
      absl::Status size = et::viz::CheckDrawingSize(graph, traces, o.filter,
                                                    o.export_options.max_nodes,
                                                    {format, o.repeats});
      if (!size.ok()) {
        return absl::Status(size.code(),
                            absl::StrCat(o.graph_output, ": ", size.message()));
      }
    }
    et::viz::ExportOptions export_options = o.export_options;
    export_options.title = DrawingTitle(o.inputs);
    ASSIGN_OR_RETURN(
        et::viz::Exported exported,
        et::viz::ExportGraph(graph, o.graph_output, export_options));
    written->insert(written->end(), exported.files.begin(),
                    exported.files.end());
    const std::string& drawn_note = exported.note;
    absl::StrAppendFormat(
        notes, "et-viz: wrote %s (%zu nodes, %zu edges%s%s%s)\n",
        exported.files.size() == 1
            ? exported.files.front()
            : absl::StrFormat("%s .. %s", exported.files.front(),
                              exported.files.back()),
        graph.nodes.size(), graph.edges.size(),
        et::viz::IsDrawing(format)
            ? absl::StrFormat(", layout size %d",
                              et::viz::EstimateLayoutSize(graph))
            : "",
        graph.repeats.empty()
            ? ""
            : absl::StrFormat("; %d repeated nodes folded into %d run%s "
                              "drawn once, marked x N; --repeats keep "
                              "draws them all",
                              graph.repeat_folded_nodes, graph.repeats.size(),
                              graph.repeats.size() == 1 ? "" : "s"),
        drawn_note.empty() ? "" : absl::StrCat("; ", drawn_note));
  }
  if (!o.timeline_output.empty()) {
    ASSIGN_OR_RETURN(auto summary, et::viz::WriteTimelineFile(
                                       traces, selections, o.timeline_output));
    written->push_back(o.timeline_output);
    absl::StrAppendFormat(notes,
                          "et-viz: wrote %s (%d events on %d tracks; %d "
                          "untimed nodes left out)\n",
                          o.timeline_output, summary.events, summary.tracks,
                          summary.untimed_nodes);
  }
  if (o.report) {
    const auto report = et::viz::BuildReport(traces, selections, {o.by_shape});
    std::cout << (o.report_json ? report.ToJson() : report.ToText(o.top));
    if (!o.html_output.empty()) {
      RETURN_IF_ERROR(et::WriteFileAtomically(
          o.html_output, et::viz::TraceReportPage(report, o.top)));
      written->push_back(o.html_output);
    }
  }
  return absl::OkStatus();
}

absl::Status Run(const Options& o) {
  // Outputs are checked before the work (base/path.h).
  for (auto [flag, path] : {std::make_pair("-o", o.graph_output),
                            std::make_pair("--timeline", o.timeline_output),
                            std::make_pair("--raw-json", o.raw_json_output),
                            std::make_pair("--html", o.html_output)}) {
    RETURN_IF_ERROR(et::CheckOutputPath(flag, path));
  }
  std::vector<std::string> written;
  std::string notes;
  absl::Status status = RunSteps(o, &written, &notes);
  if (!status.ok()) {
    for (const std::string& path : written) std::remove(path.c_str());
    return status;
  }
  std::fputs(notes.c_str(), stderr);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  auto options = ParseArgs(et::ParseToolCommandLine(
      argc, argv,
      "draws Chakra .et graphs, reports where the time goes, writes timelines\n"
      "  et-viz out.et -o graph.pdf [--step 7] [--type collective] [--ids "
      "100:400]\n"
      "  et-viz out.et --report [--json] [--html report.html]\n"
      "  et-viz --diff before.et after.et [--json] [--html diff.html]\n"
      "  et-viz out.0.et out.1.et -o ranks.svg  (or a directory of them)\n"
      "  et-viz out.et --timeline trace.json"));
  absl::Status status = options.ok() ? Run(*options) : options.status();
  if (!status.ok()) {
    std::fprintf(stderr, "et-viz: error: %s\n",
                 et::EscapeForPrint(status.message()).c_str());
    return options.ok() ? 1 : et::kUsageExitCode;
  }
  return 0;
}
