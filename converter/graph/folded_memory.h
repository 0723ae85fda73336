// The memory an op's folded children take while it runs: at simulation
// granularity an op with a cost model is one node and the ops under it are
// folded into it, so the temporaries they allocate and free inside it
// (softmax's backward multiplies the gradient by the output into a buffer of
// the output's size) appear in no node's tensors. The emitter stamps their
// peak on the node (attr `folded_peak_bytes`) for the memory model
// (docs/memory-model.md).
#ifndef CONVERTER_GRAPH_FOLDED_MEMORY_H_
#define CONVERTER_GRAPH_FOLDED_MEMORY_H_

#include <cstdint>

#include "converter/graph/op_table.h"

namespace et::convert {

// The most bytes the host ops under `node` (its call subtree) hold at once in
// storages they allocate: an output whose storage is none of that op's
// inputs, nor one of `node`'s own inputs or outputs, held from that op to its
// last use in the subtree. Counted on the GPU when any such storage is there,
// else on the host. 0 when nothing under it allocates.
int64_t FoldedPeakBytes(const OpTable& table, uint32_t node);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_FOLDED_MEMORY_H_
