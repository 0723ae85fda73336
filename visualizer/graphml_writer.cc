// GraphML output for et-viz; see graphml_writer.h.
#include "visualizer/graphml_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/et_def.pb.h"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

struct KeyDecl {
  const char* id;
  const char* domain;  // "node" or "edge"
  const char* type;    // GraphML attr.type
};

constexpr KeyDecl kKeys[] = {
    {"et_id", "node", "long"},        {"rank", "node", "int"},
    {"name", "node", "string"},       {"type", "node", "string"},
    {"kind", "node", "string"},       {"device", "node", "string"},
    {"track", "node", "string"},      {"duration_us", "node", "double"},
    {"bytes", "node", "long"},        {"comm_type", "node", "string"},
    {"pg_name", "node", "string"},    {"folded", "node", "long"},
    {"repeat_count", "node", "long"}, {"repeat_ids", "node", "string"},
    {"edge_kind", "edge", "string"},
};

void AppendData(absl::string_view key, absl::string_view value,
                std::string* out) {
  absl::StrAppend(out, "      <data key=\"", key, "\">", XmlEscape(value),
                  "</data>\n");
}

void AppendNode(const VizGraph& graph, const VizNode& n, std::string* out) {
  absl::StrAppend(out, "    <node id=\"", XmlEscape(VizGraph::NodeKey(n)),
                  "\">\n");
  AppendData("et_id", absl::StrCat(n.id), out);
  AppendData("rank", absl::StrCat(n.rank), out);
  AppendData("name", n.name, out);
  AppendData("type", ChakraProtoMsg::NodeType_Name(n.type), out);
  AppendData("kind", KindName(n.kind), out);
  AppendData("device", DeviceName(n.device), out);
  AppendData("track", QueueName(n.queue, n.pg_name), out);
  AppendData("duration_us", absl::StrFormat("%.3f", n.duration_ns / 1e3), out);
  AppendData("bytes", absl::StrCat(n.bytes), out);
  if (!n.comm_type.empty()) AppendData("comm_type", n.comm_type, out);
  if (!n.pg_name.empty()) AppendData("pg_name", n.pg_name, out);
  if (n.folded > 0) AppendData("folded", absl::StrCat(n.folded), out);
  if (n.repeat >= 0) {
    const RepeatRun& run = graph.repeats[n.repeat];
    AppendData("repeat_count", absl::StrCat(run.count), out);
    AppendData("repeat_ids", absl::StrCat(run.first_id, "..", run.last_id),
               out);
  }
  absl::StrAppend(out, "    </node>\n");
}

}  // namespace

std::string WriteGraphMl(const VizGraph& graph) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\"\n"
      "    xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
      "    xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
      "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n";
  for (const KeyDecl& key : kKeys) {
    // The edge key's attr.name is "kind" (what readers show); its id differs
    // from the node key "kind" because GraphML key ids share one namespace.
    const absl::string_view name =
        absl::string_view(key.id) == "edge_kind" ? "kind" : key.id;
    absl::StrAppendFormat(
        &out,
        "  <key id=\"%s\" for=\"%s\" attr.name=\"%s\" attr.type=\"%s\"/>\n",
        key.id, key.domain, name, key.type);
  }
  absl::StrAppend(&out, "  <graph id=\"et\" edgedefault=\"directed\">\n");
  for (const VizNode& n : graph.nodes) AppendNode(graph, n, &out);
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    absl::StrAppendFormat(
        &out,
        "    <edge id=\"e%d\" source=\"%s\" target=\"%s\">\n"
        "      <data key=\"edge_kind\">%s</data>\n    </edge>\n",
        k, XmlEscape(VizGraph::NodeKey(graph.nodes[e.from])),
        XmlEscape(VizGraph::NodeKey(graph.nodes[e.to])), EdgeKindName(e.kind));
  }
  absl::StrAppend(&out, "  </graph>\n</graphml>\n");
  return out;
}

}  // namespace et::viz
