// The repeated blocks among a step's layers (pipeline_plan.h's layer blocks:
// an op reading parameters no earlier op read starts one): a transformer's N
// blocks are N consecutive runs of the same layers (layer_norm, the QKV and
// output projections, layer_norm, the two MLP linears), each layer the same
// op reading the same parameter bytes. The longest stretch of the step made
// of such repeats is the model's blocks; the layers before it (the
// embeddings) and after it (the final norm, the head) are no block. A
// pipeline cuts between blocks: --pp-split counts them per stage, and the
// interleaved schedule splits them into P x V equal chunks.
#ifndef SCALEOUT_PIPELINE_BLOCKS_H_
#define SCALEOUT_PIPELINE_BLOCKS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace et::scaleout {

// What makes two layers the same: the op starting it and the parameters it
// reads first (count and bytes).
struct LayerSignature {
  std::string first_op;
  int64_t parameters = 0;
  int64_t parameter_bytes = 0;
  bool operator==(const LayerSignature& o) const {
    return first_op == o.first_op && parameters == o.parameters &&
           parameter_bytes == o.parameter_bytes;
  }
};

struct RepeatedBlocks {
  // The first layer of each block, in order; empty when no sequence of
  // layers repeats (fewer than two blocks).
  std::vector<int64_t> first_layer;
  int64_t layers_per_block = 0;
  // The layers before the first block and from the end of the last one.
  int64_t prefix_layers = 0, suffix_layers = 0;
};

// The stretch of consecutive repeats covering the most layers (ties: the
// shortest block, then the earliest start). Costs layers^2 comparisons.
RepeatedBlocks FindRepeatedBlocks(const std::vector<LayerSignature>& layers);

}  // namespace et::scaleout

#endif  // SCALEOUT_PIPELINE_BLOCKS_H_
