// The parameter gradients of a recorded training step: which tensors a
// data-parallel job would synchronize, how big each is, and which node makes
// each one ready. scaleout/dp_sync builds the synthesized collectives on it.
//
// What is matched, and why:
// - A gradient is the work of one `torch::autograd::AccumulateGrad` op: the
//   autograd engine runs exactly one per parameter per backward pass, after
//   the parameter's gradient is complete, and PyTorch DDP's reducer hooks the
//   same op (its hook marks the gradient ready). At simulation granularity
//   that op is a container, not a node, so et-convert stamps the nodes under
//   it with the op's ET id (attribute `grad_accumulator`); at `--keep all`
//   (and in graphs by other converters) the op is itself a node, recognized by
//   its name. The nodes stamped with one id are one gradient.
// - Its size and dtype: the first tensor input of the group's first node (the
//   op's own input, or `detach`/`add_`'s: the incoming gradient and the
//   accumulated one have the parameter's shape). Its storage id names the
//   tensor that `param.grad` is from then on.
// - Ready: the group's last node (largest id: the host op, or on a GPU trace
//   the kernel it launched, whose ids follow every host op's). Ready order is
//   the order of the groups' first (host) nodes: the autograd engine's order.
// - The optimizer: nodes stamped `optimizer_step` (the ET id of an
//   `Optimizer.step#...` span). Each optimizer step closes an iteration: the
//   gradients made ready after the previous one belong to it, and its first
//   node is what must wait for the gradients' synchronization.
// - Registration order (the order of `model.parameters()`): the order in which
//   the optimizer first reads each gradient's storage (optimizers walk their
//   parameter groups in registration order); gradients it never reads follow
//   in reverse ready order, the order of a sequential model.
#ifndef SCALEOUT_GRADIENTS_H_
#define SCALEOUT_GRADIENTS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "model/dep_graph.h"
#include "model/dtype.h"
#include "model/graph.h"
#include "model/node_model.h"

namespace et::scaleout {

struct Gradient {
  uint64_t accumulator_id = 0;  // ET id of the AccumulateGrad op
  NodeIndex first_node = 0;     // the group's first node (host side)
  NodeIndex ready_node = 0;     // the node after which the gradient is ready
  uint64_t storage_id = 0;      // the storage param.grad holds (0: unknown)
  int64_t num_elems = 0;
  Dtype dtype = Dtype::kUnknown;
  int64_t bytes = 0;
};

// One backward pass and the optimizer step that uses its gradients.
struct Iteration {
  std::vector<Gradient> gradients;  // ready order
  // Indices into `gradients` in parameter registration order.
  std::vector<int> registration_order;
  // The optimizer's first and last nodes (by id); nullopt without an
  // optimizer step after these gradients.
  std::optional<NodeIndex> optimizer_first;
  std::optional<NodeIndex> optimizer_last;
  // The first node of the iteration (the forward pass's first op): the
  // smallest id after the previous optimizer step (the graph's first node for
  // the first iteration).
  NodeIndex first_node = 0;
  int64_t step = -1;  // `step` attribute of the first gradient's node

  int64_t Bytes() const;
};

struct GradientsResult {
  std::vector<Iteration> iterations;  // in trace order
};

// Finds every iteration's gradients. An error names the problem: no
// gradients at all (with the reason: the trace has no AccumulateGrad work, or
// it was converted by an et-convert that did not stamp it), or a gradient
// whose tensor has no known size or dtype (naming the node).
// On the node model's training stamps (model/node_model.h), decoded when it
// was loaded; the graph's form decodes its model first.
absl::StatusOr<GradientsResult> FindGradients(const NodeModel& model);
absl::StatusOr<GradientsResult> FindGradients(const Graph& graph);

}  // namespace et::scaleout

#endif  // SCALEOUT_GRADIENTS_H_
