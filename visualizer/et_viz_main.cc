// et-viz: draws Chakra .et graphs (DOT, PDF, SVG, PNG, GraphML, JSON), prints
// where the time goes (--report), and writes Chrome/Perfetto timelines
// (--timeline). Flags are parsed here only, into Options; the work is in the
// et_visualizer library.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/graph_json.h"
#include "proto/status_macros.h"
#include "visualizer/graph_export.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/timeline_writer.h"
#include "visualizer/trace_report.h"
#include "visualizer/viz_graph.h"

namespace {

constexpr char kUsage[] = R"(usage: et-viz [options] TRACE.et [TRACE.et ...]

Draws the dependency graph of Chakra .et traces, reports where the time goes, and writes
timelines. Several inputs (one per rank) are drawn side by side, with the collectives of
one process group joined across ranks.

Outputs (with none given, --report is assumed):
  -o, --output FILE   draw the graph; the extension picks the format: .dot, .pdf, .svg,
                      .png (these three through Graphviz's `dot`), .graphml, .json
                      (networkx node-link)
  --report            print ops by self/total time, communication, busy time per track
  --json              print the report as JSON instead of a table
  --timeline FILE     write a Chrome/Perfetto trace (JSON) of the recorded times
  --raw-json FILE     write the whole .et (one input) as protobuf JSON

Filters (combined; they apply to the graph, the report and the timeline):
  --ids A:B           node ids A..B inclusive (A:, :B and A also work)
  --name REGEX        names matching REGEX (ECMAScript, anywhere in the name)
  --type LIST         compute, collective, sendrecv, comm, memory, metadata, cpu, gpu
  --rank LIST         ranks, e.g. 0,2-3
  --step N            ProfilerStep#N and the ops inside it
  --depth D           ops nested at most D deep (0 = top level)
  --collapse          draw hidden ops as part of their nearest shown ancestor

Drawing and report:
  --max-nodes N       refuse drawings above N nodes (default 2000; 0 = no limit)
  --dot PROGRAM       the Graphviz program (default: `dot` on PATH)
  --by-shape          group report rows by input shapes as well as by name
  --top N             report rows to print (default 25; 0 = all)
  -h, --help          this text
)";

struct Options {
  std::vector<std::string> inputs;
  std::string graph_output;
  std::string timeline_output;
  std::string raw_json_output;
  bool report = false;
  bool report_json = false;
  bool by_shape = false;
  int top = 25;
  et::viz::NodeFilter filter;
  et::viz::ExportOptions export_options;
};

absl::Status ParseInt(const std::string& flag, const std::string& text,
                      int64_t min, int64_t* value) {
  if (!absl::SimpleAtoi(text, value) || *value < min) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s '%s': expected an integer >= %d", flag, text, min));
  }
  return absl::OkStatus();
}

// Applies one flag that takes a value.
absl::Status ApplyValueFlag(const std::string& flag, const std::string& value,
                            Options* o) {
  int64_t number = 0;
  if (flag == "-o" || flag == "--output") {
    o->graph_output = value;
  } else if (flag == "--timeline") {
    o->timeline_output = value;
  } else if (flag == "--raw-json") {
    o->raw_json_output = value;
  } else if (flag == "--ids") {
    return et::viz::ParseIdRange(value, &o->filter);
  } else if (flag == "--name") {
    if (value.empty())
      return absl::InvalidArgumentError("--name: empty pattern");
    o->filter.name_pattern = value;
  } else if (flag == "--type") {
    return et::viz::ParseNodeTypes(value, &o->filter);
  } else if (flag == "--rank") {
    ASSIGN_OR_RETURN(o->filter.ranks, et::viz::ParseRankList(value));
  } else if (flag == "--step") {
    RETURN_IF_ERROR(ParseInt(flag, value, 0, &number));
    o->filter.step = number;
  } else if (flag == "--depth") {
    RETURN_IF_ERROR(ParseInt(flag, value, 0, &number));
    o->filter.max_depth = static_cast<int32_t>(number);
  } else if (flag == "--max-nodes") {
    RETURN_IF_ERROR(ParseInt(flag, value, 0, &o->export_options.max_nodes));
  } else if (flag == "--dot") {
    o->export_options.dot_program = value;
  } else if (flag == "--top") {
    RETURN_IF_ERROR(ParseInt(flag, value, 0, &number));
    o->top = static_cast<int>(number);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag ", flag, "; see --help"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--report") {
      o.report = true;
    } else if (arg == "--json") {
      o.report_json = true;
    } else if (arg == "--collapse") {
      o.filter.collapse = true;
    } else if (arg == "--by-shape") {
      o.by_shape = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::string flag = arg;
      std::string value;
      if (size_t eq = arg.find('=');
          eq != std::string::npos && arg.rfind("--", 0) == 0) {
        flag = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      } else if (k + 1 < argc) {
        value = argv[++k];
      } else {
        return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
      }
      RETURN_IF_ERROR(ApplyValueFlag(flag, value, &o));
    } else if (et::viz::GraphFormatFromPath(arg).ok() &&
               !absl::EndsWith(arg, ".et")) {
      // A stray output name is a common slip (`et-viz a.et graph.pdf`).
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: looks like an output file, not a .et input; did you mean -o %s?",
          arg, arg));
    } else {
      o.inputs.push_back(arg);
    }
  }
  if (o.inputs.empty()) {
    return absl::InvalidArgumentError("no input .et file; see --help");
  }
  if (!o.raw_json_output.empty() && o.inputs.size() != 1) {
    return absl::InvalidArgumentError("--raw-json takes exactly one input");
  }
  if (o.report_json) o.report = true;
  if (o.graph_output.empty() && o.timeline_output.empty() &&
      o.raw_json_output.empty()) {
    o.report = true;
  }
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

absl::Status Run(const Options& o) {
  if (!o.raw_json_output.empty()) {
    RETURN_IF_ERROR(et::EtToJsonFile(o.inputs[0], o.raw_json_output));
  }
  ASSIGN_OR_RETURN(auto traces, et::viz::LoadRankTraces(o.inputs));
  ASSIGN_OR_RETURN(auto selections, et::viz::SelectNodes(traces, o.filter));
  if (!o.graph_output.empty()) {
    ASSIGN_OR_RETURN(auto format, et::viz::GraphFormatFromPath(o.graph_output));
    et::viz::VizGraph graph = et::viz::BuildVizGraph(traces, selections);
    if (et::viz::IsDrawing(format)) {
      absl::Status size = et::viz::CheckDrawingSize(
          graph, traces, selections, o.filter, o.export_options.max_nodes);
      if (!size.ok()) {
        return absl::Status(size.code(),
                            absl::StrCat(o.graph_output, ": ", size.message()));
      }
    }
    et::viz::ExportOptions export_options = o.export_options;
    export_options.title = DrawingTitle(o.inputs);
    RETURN_IF_ERROR(
        et::viz::ExportGraph(graph, o.graph_output, export_options));
    std::fprintf(stderr, "et-viz: wrote %s (%zu nodes, %zu edges%s)\n",
                 o.graph_output.c_str(), graph.nodes.size(), graph.edges.size(),
                 et::viz::IsDrawing(format)
                     ? absl::StrFormat(", layout size %d",
                                       et::viz::EstimateLayoutSize(graph))
                           .c_str()
                     : "");
  }
  if (!o.timeline_output.empty()) {
    ASSIGN_OR_RETURN(auto summary, et::viz::WriteTimelineFile(
                                       traces, selections, o.timeline_output));
    std::fprintf(stderr,
                 "et-viz: wrote %s (%lld events on %lld tracks; %lld untimed "
                 "nodes left out)\n",
                 o.timeline_output.c_str(),
                 static_cast<long long>(summary.events),
                 static_cast<long long>(summary.tracks),
                 static_cast<long long>(summary.untimed_nodes));
  }
  if (o.report) {
    const auto report = et::viz::BuildReport(traces, selections, {o.by_shape});
    std::cout << (o.report_json ? report.ToJson() : report.ToText(o.top));
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  auto options = ParseArgs(argc, argv);
  absl::Status status = options.ok() ? Run(*options) : options.status();
  if (!status.ok()) {
    std::fprintf(stderr, "et-viz: error: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
