// A pipeline stage's graph in its schedule's order; see pipeline_schedule.h.
#include "scaleout/pipeline_schedule.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "model/dtype.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/pipeline_order.h"

namespace et::scaleout {
namespace {

using ChakraProtoMsg::Node;

// The point-to-point channels: one stream each (the activations in and out,
// their gradients in and out), so that no send waits behind another
// direction's receive. A receive is posted when the stage's previous forward
// or backward (and its collectives) is done, with the send after it, as
// Megatron-LM's 1F1B posts send_forward_recv_backward: posted at the start,
// receives would hold ASTRA-sim's communication slot (a receive in flight
// lets no send or collective issue: HardwareResource::is_available, 518bd51)
// and every stage with a send to make would stall.
constexpr int64_t kActInStream = 9001, kActOutStream = 9002,
                  kGradInStream = 9003, kGradOutStream = 9004;

// One tag per message of a step between two ranks: micro-batch k's
// activations across boundary b (chunk b to b + 1) 2 (k V + b / P), their
// gradient 1 more, the same on the sending and the receiving rank (with one
// chunk per rank: 2k and 2k + 1). The boundaries between one pair of ranks
// in one direction differ in b / P.
int32_t MessageTag(const PipelineOptions& o, int64_t micro_batch,
                   int64_t boundary, bool gradient) {
  return static_cast<int32_t>(2 * (micro_batch * o.chunks + boundary / o.pp) +
                              (gradient ? 1 : 0));
}

class Builder {
 public:
  Builder(const NodeModel& model, bool on_host)
      : model_(model), on_host_(on_host) {}

  uint64_t Compute(const std::string& name, int64_t ns,
                   std::vector<uint64_t> deps) {
    Node& n = Add(name, ChakraProtoMsg::COMP_NODE, deps);
    SetBool(n.mutable_attr(), attr::kIsCpuOp, true);
    SetInt64(n.mutable_attr(), attr::kTid, 1);
    n.set_duration_micros(static_cast<uint64_t>(ns / 1000));
    SetInt64(n.mutable_attr(), attr::kDurationNs, ns);
    compute_ns_.push_back({n.id(), ns});
    return n.id();
  }

  // `tag` pairs the send with its receive (ASTRA-sim's feeder matches them by
  // peer and tag, and refuses a send or receive without one).
  uint64_t PointToPoint(bool send, int64_t peer, int64_t bytes, int64_t stream,
                        int32_t tag, const std::string& name,
                        std::vector<uint64_t> deps) {
    Node& n = Add(
        name,
        send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE,
        deps);
    auto* attrs = n.mutable_attr();
    SetBool(attrs, attr::kIsCpuOp, false);
    if (on_host_) SetBool(attrs, attr::kCommOnHost, true);
    SetInt64(attrs, attr::kStream, stream);
    SetInt64(attrs, attr::kCommSize, bytes);
    SetInt32(attrs, send ? attr::kCommDst : attr::kCommSrc,
             static_cast<int32_t>(peer));
    SetInt32(attrs, attr::kCommTag, tag);
    SetString(attrs, attr::kPgName, kPpGroupName);
    SetBool(attrs, attr::kSynthesized, true);
    return n.id();
  }

  // A copy of the model's collective `i` moving `bytes`.
  uint64_t Collective(NodeIndex i, int64_t bytes, std::vector<uint64_t> deps) {
    const CommSpec& c = *model_.comm(i);
    Node& n =
        Add(std::string(model_.name(i)), ChakraProtoMsg::COMM_COLL_NODE, deps);
    auto* attrs = n.mutable_attr();
    SetBool(attrs, attr::kIsCpuOp, false);
    if (c.on_host) SetBool(attrs, attr::kCommOnHost, true);
    SetInt64(attrs, attr::kCommType, c.type);
    SetInt64(attrs, attr::kCommSize, bytes);
    if (c.pg_name != 0)
      SetString(attrs, attr::kPgName, std::string(model_.string(c.pg_name)));
    if (c.dtype != Dtype::kUnknown)
      SetString(attrs, attr::kDtype, DtypeName(c.dtype));
    if (c.grad_sync) SetBool(attrs, attr::kGradSync, true);
    SetBool(attrs, attr::kSynthesized, true);
    return n.id();
  }

  std::vector<Node> TakeNodes() { return std::move(nodes_); }
  std::vector<std::pair<uint64_t, int64_t>> TakeTimes() {
    return std::move(compute_ns_);
  }

 private:
  Node& Add(const std::string& name, ChakraProtoMsg::NodeType type,
            const std::vector<uint64_t>& deps) {
    Node& n = nodes_.emplace_back();
    n.set_id(nodes_.size());
    n.set_name(name);
    n.set_type(type);
    for (uint64_t d : deps)
      if (d != 0) n.add_data_deps(d);
    return n;
  }

  const NodeModel& model_;
  bool on_host_;
  std::vector<Node> nodes_;
  std::vector<std::pair<uint64_t, int64_t>> compute_ns_;
};

}  // namespace

StageGraph BuildStageGraph(const PipelinePlan& plan, int64_t stage,
                           const NodeModel& model,
                           const ChakraProtoMsg::GlobalMetadata& metadata,
                           int64_t prev_rank, int64_t next_rank, bool on_host) {
  const PipelineOptions& o = plan.options;
  const int64_t mb = o.micro_batches;
  const int64_t chunks = static_cast<int64_t>(plan.chunks.size());
  const std::vector<PipelinePass> order =
      PassOrder(o.schedule, o.pp, mb, o.chunks, stage);
  StageGraph out;
  Builder b(model, on_host);
  uint64_t last = 0;
  std::vector<uint64_t> grad_syncs;
  for (size_t p = 0; p < order.size(); ++p) {
    const auto [backward, k, index] = order[p];
    const int64_t g = index * o.pp + stage;  // the model chunk
    const PipelineChunk& ch = plan.chunks[g];
    // Forward: the activation from chunk g - 1 in, to g + 1 out; backward:
    // its gradient from g + 1 in, to g - 1 out. The boundary each crosses
    // and its bytes (the sending side's chunk's output).
    const bool receives = backward ? g + 1 < chunks : g > 0;
    const bool sends = backward ? g > 0 : g + 1 < chunks;
    const int64_t in_boundary = backward ? g : g - 1;
    const int64_t out_boundary = backward ? g - 1 : g;
    std::vector<uint64_t> deps = {last};
    if (receives) {
      deps.push_back(b.PointToPoint(
          false, backward ? next_rank : prev_rank,
          plan.chunks[in_boundary].send_bytes,
          backward ? kGradInStream : kActInStream,
          MessageTag(o, k, in_boundary, backward),
          absl::StrFormat("pp:recv %s mb%d", backward ? "grad" : "act", k),
          {last}));
      ++out.recvs;
    }
    const std::string chunk_text =
        o.chunks > 1 ? absl::StrFormat(" chunk %d", index) : "";
    last = b.Compute(absl::StrFormat("pp:%s mb%d%s (layers %d-%d)",
                                     backward ? "backward" : "forward", k,
                                     chunk_text, ch.first_layer, ch.last_layer),
                     backward ? ch.backward_ns : ch.forward_ns, deps);
    for (const StageCollective& c : plan.collectives) {
      if (c.stage != stage || c.backward != backward) continue;
      if (c.per_step) {
        // Gradient syncs after the stage's last pass (a backward).
        if (p + 1 == order.size())
          grad_syncs.push_back(b.Collective(
              c.node,
              static_cast<int64_t>(
                  static_cast<double>(model.comm(c.node)->bytes) * c.share),
              {last}));
        continue;
      }
      if (c.chunk != g) continue;
      last = b.Collective(c.node, (model.comm(c.node)->bytes + mb - 1) / mb,
                          {last});
    }
    if (sends) {
      const int64_t bytes = plan.chunks[out_boundary].send_bytes;
      b.PointToPoint(
          true, backward ? prev_rank : next_rank, bytes,
          backward ? kGradOutStream : kActOutStream,
          MessageTag(o, k, out_boundary, backward),
          absl::StrFormat("pp:send %s mb%d", backward ? "grad" : "act", k),
          {last});
      ++out.sends;
      out.send_bytes += bytes;
    }
  }
  grad_syncs.push_back(last);
  b.Compute("pp:optimizer and the rest of the step",
            plan.stages[stage].other_ns, grad_syncs);
  out.compute_ns = b.TakeTimes();
  out.graph = Graph::Build(metadata, b.TakeNodes());
  return out;
}

}  // namespace et::scaleout
