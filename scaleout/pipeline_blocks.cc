// The repeated blocks of a step's layers; see pipeline_blocks.h.
#include "scaleout/pipeline_blocks.h"

namespace et::scaleout {

RepeatedBlocks FindRepeatedBlocks(const std::vector<LayerSignature>& layers) {
  const int64_t n = static_cast<int64_t>(layers.size());
  int64_t best_cover = 0, best_period = 0, best_start = 0;
  for (int64_t p = 1; 2 * p <= n; ++p) {
    // A run of r consecutive i with layers[i] == layers[i + p], starting at
    // a, makes floor((r + p) / p) repeats of the p layers from a.
    int64_t run = 0;
    for (int64_t i = 0; i + p <= n; ++i) {
      const bool same = i + p < n && layers[i] == layers[i + p];
      if (same) {
        ++run;
        continue;
      }
      const int64_t start = i - run;
      const int64_t cover = (run + p) / p * p;
      run = 0;
      if (cover < 2 * p) continue;
      if (cover > best_cover) {
        best_cover = cover;
        best_period = p;
        best_start = start;
      }
    }
  }
  RepeatedBlocks out;
  if (best_cover == 0) return out;
  out.layers_per_block = best_period;
  for (int64_t a = best_start; a < best_start + best_cover; a += best_period)
    out.first_layer.push_back(a);
  out.prefix_layers = best_start;
  out.suffix_layers = n - best_start - best_cover;
  return out;
}

}  // namespace et::scaleout
