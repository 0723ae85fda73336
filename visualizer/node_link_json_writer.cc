// Node-link JSON output for et-viz; see node_link_json_writer.h.
#include "visualizer/node_link_json_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/et_def.pb.h"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

void AppendNode(const VizGraph& graph, const VizNode& n, std::string* out) {
  absl::StrAppend(out, "    {\"id\": ", JsonQuote(VizGraph::NodeKey(n)),
                  ", \"et_id\": ", n.id, ", \"rank\": ", n.rank,
                  ", \"name\": ", JsonQuote(n.name), ", \"type\": ",
                  JsonQuote(ChakraProtoMsg::NodeType_Name(n.type)),
                  ", \"kind\": ", JsonQuote(KindName(n.kind)),
                  ", \"device\": ", JsonQuote(DeviceName(n.device)),
                  ", \"track\": ", JsonQuote(QueueName(n.queue, n.pg_name)));
  absl::StrAppendFormat(out, ", \"duration_us\": %.3f, \"bytes\": %d",
                        n.duration_ns / 1e3, n.bytes);
  if (!n.comm_type.empty())
    absl::StrAppend(out, ", \"comm_type\": ", JsonQuote(n.comm_type));
  if (!n.pg_name.empty())
    absl::StrAppend(out, ", \"pg_name\": ", JsonQuote(n.pg_name));
  if (n.folded > 0) absl::StrAppend(out, ", \"folded\": ", n.folded);
  if (n.repeat >= 0) {
    const RepeatRun& run = graph.repeats[n.repeat];
    absl::StrAppend(out, ", \"repeat_count\": ", run.count,
                    ", \"repeat_ids\": \"", run.first_id, "..", run.last_id,
                    "\"");
  }
  out->push_back('}');
}

}  // namespace

std::string WriteNodeLinkJson(const VizGraph& graph) {
  std::string out = absl::StrCat(
      "{\"directed\": true, \"multigraph\": true, \"graph\": {\"ranks\": [",
      absl::StrJoin(graph.ranks, ", "),
      "], \"input_nodes\": ", graph.input_nodes,
      ", \"repeat_folded_nodes\": ", graph.repeat_folded_nodes,
      "},\n  \"nodes\": [\n");
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    AppendNode(graph, graph.nodes[k], &out);
    out += k + 1 < graph.nodes.size() ? ",\n" : "\n";
  }
  out += "  ],\n  \"links\": [\n";
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    const std::string kind = JsonQuote(EdgeKindName(e.kind));
    absl::StrAppend(
        &out,
        "    {\"source\": ", JsonQuote(VizGraph::NodeKey(graph.nodes[e.from])),
        ", \"target\": ", JsonQuote(VizGraph::NodeKey(graph.nodes[e.to])),
        ", \"key\": ", kind, ", \"kind\": ", kind, "}",
        k + 1 < graph.edges.size() ? ",\n" : "\n");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace et::viz
