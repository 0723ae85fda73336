// JSON for a VizGraph in networkx's node-link layout ({"directed",
// "multigraph", "graph", "nodes": [{"id", ...}], "links": [{"source", "target",
// "key", "kind"}]}), so that `networkx.node_link_graph(json.load(f))` or any JS
// graph library reads it without glue. Multigraph because a data and a control
// edge may join the same two nodes; the edge key is its kind. For the raw .et
// contents (every proto field) use et::EtToJsonFile (proto/graph_json.h), which
// this tool exposes as --raw-json. Stateless; thread-safe.
#ifndef VISUALIZER_NODE_LINK_JSON_WRITER_H_
#define VISUALIZER_NODE_LINK_JSON_WRITER_H_

#include <string>

#include "visualizer/viz_graph.h"

namespace et::viz {

std::string WriteNodeLinkJson(const VizGraph& graph);

}  // namespace et::viz

#endif  // VISUALIZER_NODE_LINK_JSON_WRITER_H_
