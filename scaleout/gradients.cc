// Finding the parameter gradients of a recorded graph; see gradients.h.
#include "scaleout/gradients.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "model/io_shapes.h"
#include "model/node_model.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et::scaleout {
namespace {

// The first and last nodes of a span of work; host nodes separately, because
// a GPU trace's kernels have ids after every host op.
struct Span {
  Span(NodeIndex first_index, NodeIndex last_index)
      : first(first_index), last(last_index) {}
  NodeIndex first, last;
  std::optional<NodeIndex> host_first, host_last;
  void Add(NodeIndex i, bool host) {
    last = std::max(last, i);
    if (host) {
      if (!host_first) host_first = i;
      host_last = i;
    }
  }
  NodeIndex order_node() const { return host_first.value_or(first); }
  NodeIndex boundary() const { return host_last.value_or(last); }
};

absl::Status SizeGradient(const NodeModel& model, Gradient* g) {
  const TrainingStamp& s = *model.training(g->first_node);
  if (s.gradient_sized) {
    g->num_elems = s.num_elems;
    g->dtype = s.dtype;
    g->bytes = s.bytes;
    g->storage_id = s.storage_id;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "node ", model.id(g->first_node), " (", model.name(g->first_node),
      "): the gradient of AccumulateGrad op ", g->accumulator_id,
      " has no tensor input with a known size and dtype (shapes ",
      model.string(s.input_shapes), ", types ", model.string(s.input_types),
      ")"));
}

// Registration order: the optimizer's first read of each gradient's storage.
std::vector<int> RegistrationOrder(const NodeModel& model,
                                   const Span& optimizer, uint64_t optimizer_id,
                                   const std::vector<Gradient>& grads) {
  absl::flat_hash_map<uint64_t, int> by_storage;
  for (int k = 0; k < static_cast<int>(grads.size()); ++k)
    if (grads[k].storage_id != 0)
      by_storage.try_emplace(grads[k].storage_id, k);
  std::vector<int> order;
  std::vector<bool> seen(grads.size(), false);
  for (NodeIndex i = optimizer.order_node(); i <= optimizer.boundary(); ++i) {
    const TrainingStamp* s = model.training(i);
    if (s == nullptr || s->optimizer != optimizer_id || !s->reads_parsed)
      continue;
    for (uint64_t storage : model.read_storages(*s)) {
      auto it = by_storage.find(storage);
      if (it == by_storage.end() || seen[it->second]) continue;
      seen[it->second] = true;
      order.push_back(it->second);
    }
  }
  for (int k = static_cast<int>(grads.size()) - 1; k >= 0; --k)
    if (!seen[k]) order.push_back(k);
  return order;
}

}  // namespace

int64_t Iteration::Bytes() const {
  int64_t sum = 0;
  for (const Gradient& g : gradients) sum += g.bytes;
  return sum;
}

absl::StatusOr<GradientsResult> FindGradients(const Graph& graph) {
  ModelOptions options;
  options.keep_io = false;
  return FindGradients(NodeModel::FromGraph(graph, options));
}

absl::StatusOr<GradientsResult> FindGradients(const NodeModel& model) {
  std::map<uint64_t, Span> grad_spans;       // by accumulator id
  std::map<uint64_t, Span> optimizer_spans;  // by optimizer op id
  for (NodeIndex i = 0; i < model.size(); ++i) {
    const TrainingStamp* s = model.training(i);
    if (s == nullptr) continue;
    const bool host = model.on_host(i);
    if (s->accumulator) {
      auto [it, fresh] = grad_spans.try_emplace(*s->accumulator, Span(i, i));
      it->second.Add(i, host);
    }
    if (s->optimizer) {
      auto [it, fresh] = optimizer_spans.try_emplace(*s->optimizer, Span(i, i));
      it->second.Add(i, host);
    }
  }
  if (grad_spans.empty()) {
    return absl::NotFoundError(
        "no parameter gradients found: no node is a "
        "torch::autograd::AccumulateGrad op or stamped `grad_accumulator` "
        "(a trace of inference, or a .et written by an et-convert older than "
        "the data-parallel sync: convert the PyTorch trace again)");
  }
  std::vector<Gradient> all;
  for (const auto& [acc, span] : grad_spans) {
    Gradient g;
    g.accumulator_id = acc;
    g.first_node = span.order_node();
    g.ready_node = span.last;
    RETURN_IF_ERROR(SizeGradient(model, &g));
    all.push_back(g);
  }
  std::sort(all.begin(), all.end(), [](const Gradient& a, const Gradient& b) {
    return a.first_node < b.first_node;
  });
  std::vector<std::pair<uint64_t, Span>> optimizers(optimizer_spans.begin(),
                                                    optimizer_spans.end());
  std::sort(optimizers.begin(), optimizers.end(),
            [](const auto& a, const auto& b) {
              return a.second.order_node() < b.second.order_node();
            });
  GradientsResult result;
  size_t next = 0;
  std::optional<NodeIndex> previous_end;
  for (size_t k = 0; k <= optimizers.size() && next < all.size(); ++k) {
    const bool has_optimizer = k < optimizers.size();
    Iteration it;
    while (next < all.size() &&
           (!has_optimizer ||
            all[next].first_node < optimizers[k].second.order_node())) {
      it.gradients.push_back(all[next++]);
    }
    if (has_optimizer) {
      const Span& span = optimizers[k].second;
      it.optimizer_first = span.order_node();
      it.optimizer_last = span.last;
      it.registration_order =
          RegistrationOrder(model, span, optimizers[k].first, it.gradients);
    } else {
      it.registration_order =
          RegistrationOrder(model, Span(1, 0), 0, it.gradients);
    }
    it.first_node = previous_end.has_value() ? *previous_end + 1 : 0;
    if (has_optimizer) previous_end = optimizers[k].second.boundary();
    if (it.gradients.empty()) continue;
    it.step = model.step(it.gradients.front().first_node);
    result.iterations.push_back(std::move(it));
  }
  return result;
}

}  // namespace et::scaleout
