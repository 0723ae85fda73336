// GraphML for a VizGraph: one <node> per drawn node, one <edge> per edge, every
// attribute declared as a typed <key> (networkx's read_graphml and yEd both
// require the declaration). Node keys: et_id, rank, name, type (Chakra
// NodeType), kind, device, track, duration_us, bytes, comm_type, pg_name,
// folded; edge key: kind (data/ctrl/collective/peer). Optional facts are
// omitted per node, not written empty. Stateless; thread-safe.
#ifndef VISUALIZER_GRAPHML_WRITER_H_
#define VISUALIZER_GRAPHML_WRITER_H_

#include <string>

#include "visualizer/viz_graph.h"

namespace et::viz {

std::string WriteGraphMl(const VizGraph& graph);

}  // namespace et::viz

#endif  // VISUALIZER_GRAPHML_WRITER_H_
