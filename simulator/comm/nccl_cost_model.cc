// The NCCL-like collective model; structure from NCCL's src/graph/tuning.cc
// (latency = base + steps x hop, bus bandwidth per algorithm and protocol),
// written for et-sim. Constants: docs/collective-model.md.
#include "simulator/comm/nccl_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simulator/comm/host_collective_model.h"
#include "simulator/comm/nccl_p2p_channels.h"

namespace et::sim {
namespace {

// Per protocol: the share of the bus a protocol carries as data, NCCL's hop
// latency on NVLink and on the network, its base latency (us), and the share
// of the tree's bus bandwidth it keeps across nodes (tuning.cc: LL a 3.8th,
// LL128 120/128).
struct Protocol {
  absl::string_view name;
  unsigned bit;  // NCCL_PROTO
  double data_share;
  double nvlink_hop_us;
  double net_hop_us;
  double base_us;
  double tree_share;
};
constexpr Protocol kLl{"LL", kNcclLl, 0.5, 0.6, 2.7, 6.6, 1 / 3.8};
constexpr Protocol kLl128{"LL128", kNcclLl128, 0.92,       1.9,
                          4.0,     14.0,       120.0 / 128};
constexpr Protocol kSimple{"Simple", kNcclSimple, 1.0, 3.4, 14.0, 8.4, 1.0};
constexpr const Protocol* kProtocols[] = {&kLl, &kLl128, &kSimple};

// Shared constants fitted to the H100 logs (docs/collective-model.md).
constexpr double kNvlsEfficiency = 0.69;  // NVLS all-reduce algbw / NVLink
// Tree algbw / the network rate a ring reaches (0.625 of NDR's line rate at
// HGX-H100's 0.94), so a slower network slows the tree too.
constexpr double kTreeNetShare = 0.625 / 0.94;
constexpr double kAllToAllShare = 0.97;  // all-to-all / ring busbw, one node
constexpr double kRampExponent = 0.78;   // Simple pipeline ramp
constexpr double kNvlsLatencyUs = 25;    // NCCL's NVLS hop (NVLink)
// NCCL's network post overhead per ring step (tuning.cc, getNetOverhead: 1
// us on Intel x86 hosts and by default, 2 on AMD; Simple pays it three
// times): "inter-node rings still have to launch nsteps * net overhead".
constexpr double kNetOverheadUs = 1.0;
// Send/recv across nodes: the share of the sending GPU's NIC line rate one
// peer's p2p channels reach (10-node H100 logs, 1-4 GPUs per node: 24.9-26.2
// of 50 GB/s; docs/collective-model.md).
constexpr double kP2pNetShare = 0.5;
// All-to-all: the fixed cost of each peer's send/recv pair, which NCCL
// schedules as one p2p task per peer (enqueue.cc), fitted to log 17.
constexpr double kAllToAllPeerUs = 2.0;

// LL's algorithm-bandwidth cap (GB/s), NCCL's llMaxBws: one node per GPU
// generation, several nodes (Intel hosts: 39 on two, 20.4 on more).
double LlCapGBps(const Platform& p, int64_t nodes) {
  if (nodes > 2) return 20.4;
  if (nodes > 1) return 39.0;
  switch (p.arch) {
    case GpuArch::kVolta:
      return 39.0;
    case GpuArch::kAmpere:
      return 87.7;
    case GpuArch::kHopper:
      return 141.0;
  }
  return 39.0;
}

// NCCL's correction of the tree's bandwidth for mid sizes (tuning.cc,
// treeCorrectionFactor: "trees are not perfectly sticking to the model for
// medium sizes"), per protocol (LL, LL128, Simple) and log2(bytes / 64),
// 64 B to 256 MiB; 1 outside.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

double TreeCorrection(const Protocol* protocol, double bytes) {
  if (bytes < 64) return 1.0;
  const int log_size = static_cast<int>(std::floor(std::log2(bytes / 64)));
  if (log_size >= 23) return 1.0;
  const int row = protocol == &kLl ? 0 : protocol == &kLl128 ? 1 : 2;
  return kTreeCorrection[row][log_size];
}

struct Candidate {
  absl::string_view algorithm;
  unsigned algorithm_bit;  // NCCL_ALGO; 0: p2p, which NCCL_ALGO leaves alone
  const Protocol* protocol;
  double latency_us;
  double bus_gbps;
};

struct Shape {
  int64_t ranks, nodes, per_node;
};

// The host's launch cost: one process per GPU, or one driving several in
// turn (nccl-tests -g).
double LaunchUs(const Platform& p) {
  return p.launch_us +
         static_cast<double>(p.nccl.gpus_per_process - 1) * p.launch_per_gpu_us;
}

// NCCL_ALGO's bit for a candidate's algorithm name.
unsigned AlgorithmBit(absl::string_view algorithm) {
  if (algorithm == "ring") return kNcclRing;
  if (algorithm == "tree") return kNcclTree;
  if (algorithm == "nvls") return kNcclNvls;
  if (algorithm == "nvlstree") return kNcclNvlsTree;
  return 0;
}

// One candidate per protocol for `algorithm`; `bus_gbps` is the Simple bus
// bandwidth before the protocol's share and caps.
template <typename F>
void ForProtocols(const Platform& p, const Shape& s, NcclOp op,
                  absl::string_view algorithm, double bus_gbps, F latency_of,
                  std::vector<Candidate>* out) {
  const bool tree = algorithm == "tree";
  const double factor = BusBandwidthFactor(op, s.ranks);
  for (const Protocol* proto_ptr : kProtocols) {
    const Protocol& proto = *proto_ptr;
    // NCCL's send/recv runs LL or Simple, never LL128.
    if (&proto == &kLl128 &&
        (p.arch == GpuArch::kVolta || op == NcclOp::kSendRecv ||
         (s.nodes > 1 && !p.ll128_over_network)))
      continue;
    double bus = bus_gbps * (tree ? proto.tree_share : proto.data_share);
    // llMaxBws caps LL: the ring's algorithm bandwidth, the tree's at half
    // of it (NCCL caps the tree's bus bandwidth, of which its algorithm
    // bandwidth is half, tuning.cc).
    if (&proto == &kLl)
      bus = std::min(bus, LlCapGBps(p, s.nodes) * factor / (tree ? 2 : 1));
    out->push_back({algorithm, AlgorithmBit(algorithm), &proto,
                    LaunchUs(p) + latency_of(proto), bus});
  }
}

std::vector<Candidate> Candidates(const Platform& p, NcclOp op, const Shape& s,
                                  double bytes) {
  std::vector<Candidate> out;
  const double intra = p.intra_gbps * p.intra_efficiency;
  const double net = p.NodeNetGBps();
  const double n = static_cast<double>(s.ranks);
  const double factor = BusBandwidthFactor(op, s.ranks);
  const bool multi = s.nodes > 1;
  const double ring_bus = multi ? std::min(intra, net) : intra;
  auto net_hop = [&](const Protocol& q) { return q.net_hop_us + p.net_hop_us; };
  auto nvlink_hop = [&](const Protocol& q) {
    return q.nvlink_hop_us + p.intra_hop_us;
  };
  // One hop: all-to-all and send/recv talk to every peer at once; broadcast
  // is a pipelined chain whose hops overlap.
  auto one_hop = [&](const Protocol& q) {
    return q.base_us + (multi ? net_hop(q) : nvlink_hop(q));
  };
  switch (op) {
    case NcclOp::kAllToAll: {
      const double nodes = static_cast<double>(s.nodes);
      const double bus = multi ? net / s.per_node * factor * nodes / (nodes - 1)
                               : intra * kAllToAllShare;
      const double peers_us = (n - 1) * kAllToAllPeerUs;
      ForProtocols(
          p, s, op, "p2p", bus,
          [&](const Protocol& q) { return one_hop(q) + peers_us; }, &out);
      return out;
    }
    case NcclOp::kSendRecv: {
      // Across nodes one GPU's pair crosses, through that GPU's NIC; the
      // channels NCCL stripes the transfer over cap it below the link.
      const double gpu_nic_line =
          p.nics_per_node * p.nic_gbits / 8 / static_cast<double>(s.per_node);
      const double link = multi ? std::min(intra, gpu_nic_line * kP2pNetShare)
                                : intra * kAllToAllShare;
      const double channels = NcclP2pChannels(p, s.ranks, s.nodes, bytes).gbps;
      ForProtocols(p, s, op, "p2p", std::min(link, channels), one_hop, &out);
      return out;
    }
    case NcclOp::kBroadcast:
      ForProtocols(p, s, op, "ring", ring_bus, one_hop, &out);
      return out;
    default:
      break;
  }
  const int64_t steps =
      op == NcclOp::kAllReduce ? 2 * (s.ranks - 1) : s.ranks - 1;
  const int64_t net_steps =
      !multi ? 0 : (op == NcclOp::kAllReduce ? 2 : 1) * (s.nodes - 1);
  // A ring across nodes still posts every step to the network: each of its
  // NVLink steps costs at least NCCL's network overhead (tuning.cc).
  auto ring_nvlink_hop = [&](const Protocol& q) {
    if (!multi) return nvlink_hop(q);
    return std::max(nvlink_hop(q),
                    kNetOverheadUs * (&q == &kSimple ? 3.0 : 1.0));
  };
  ForProtocols(
      p, s, op, "ring", ring_bus,
      [&](const Protocol& q) {
        return q.base_us + (steps - net_steps) * ring_nvlink_hop(q) +
               net_steps * net_hop(q);
      },
      &out);
  if (op != NcclOp::kAllReduce) return out;
  if (multi) {
    // Tree across nodes. Two nodes: each sends and receives the whole
    // buffer once. More: NCCL's double binary tree makes every node
    // interior in one tree (two children), so it moves about twice the
    // buffer each way. Inside the node a chain (half the ring's rate) or,
    // NVLSTree, the switch (NVLS, Simple only).
    const double tree_alg = net * kTreeNetShare / (s.nodes > 2 ? 2.0 : 1.0);
    auto tree_latency = [&](const Protocol& q) {
      return q.base_us +
             2 * ((s.per_node - 1) * nvlink_hop(q) +
                  std::log2(static_cast<double>(s.nodes)) * net_hop(q));
    };
    // LL and LL128 run the tree's chains at half the slower side's rate on
    // both sides (NCCL's tuning halves a tree's bus bandwidth against the
    // ring's, tuning.cc): the node's chain and the network's.
    ForProtocols(p, s, op, "tree",
                 std::min({tree_alg, net / 2, intra / 2}) * factor,
                 tree_latency, &out);
    if (p.nvswitch_sharp) {
      const double nvls_inside =
          p.intra_gbps * kNvlsEfficiency / (1 + 1.0 / s.per_node);
      out.push_back({"nvlstree", kNcclNvlsTree, &kSimple,
                     LaunchUs(p) + tree_latency(kSimple),
                     std::min(tree_alg, nvls_inside) * factor});
    }
  }
  if (!multi && p.nvswitch_sharp) {
    // NVLS: the switch reduces; each GPU moves about S (1 + 1/n) per
    // direction.
    out.push_back({"nvls", kNcclNvls, &kSimple,
                   LaunchUs(p) + kSimple.base_us + kNvlsLatencyUs,
                   p.intra_gbps * kNvlsEfficiency / (1 + 1 / n) * factor});
  }
  return out;
}

}  // namespace

std::optional<NcclOp> NcclOpByName(absl::string_view name) {
  for (NcclOp op :
       {NcclOp::kAllReduce, NcclOp::kAllGather, NcclOp::kReduceScatter,
        NcclOp::kAllToAll, NcclOp::kBroadcast, NcclOp::kSendRecv}) {
    if (NcclOpName(op) == name) return op;
  }
  return std::nullopt;
}

absl::string_view NcclOpName(NcclOp op) {
  switch (op) {
    case NcclOp::kAllReduce:
      return "all_reduce";
    case NcclOp::kAllGather:
      return "all_gather";
    case NcclOp::kReduceScatter:
      return "reduce_scatter";
    case NcclOp::kAllToAll:
      return "alltoall";
    case NcclOp::kBroadcast:
      return "broadcast";
    case NcclOp::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

std::optional<NcclOp> NcclOpForChakra(ChakraProtoMsg::CollectiveCommType type) {
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return NcclOp::kAllReduce;
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:
      return NcclOp::kAllGather;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return NcclOp::kReduceScatter;
    case ChakraProtoMsg::ALL_TO_ALL:
      return NcclOp::kAllToAll;
    case ChakraProtoMsg::BROADCAST:
    case ChakraProtoMsg::REDUCE:
    case ChakraProtoMsg::SCATTER:
      return NcclOp::kBroadcast;
    default:
      return std::nullopt;
  }
}

double BusBandwidthFactor(NcclOp op, int64_t ranks) {
  const double n = static_cast<double>(std::max<int64_t>(ranks, 1));
  switch (op) {
    case NcclOp::kAllReduce:
      return 2 * (n - 1) / n;
    case NcclOp::kAllGather:
    case NcclOp::kReduceScatter:
    case NcclOp::kAllToAll:
      return (n - 1) / n;
    case NcclOp::kBroadcast:
    case NcclOp::kSendRecv:
      return 1;
  }
  return 1;
}

NcclEstimate NcclCollective(const Platform& platform, NcclOp op, int64_t ranks,
                            double bytes, unsigned algorithms) {
  if (ranks <= 1 && op != NcclOp::kSendRecv) return {};
  if (platform.host_backend) {
    return {HostCollectiveUs(platform, op, ranks, bytes), "gloo", "host"};
  }
  const int64_t gpn = std::max<int64_t>(1, platform.gpus_per_node);
  Shape shape{std::max<int64_t>(ranks, 2), 1, 1};
  shape.nodes = (shape.ranks + gpn - 1) / gpn;
  shape.per_node = std::min(shape.ranks, gpn);
  const double bus_bytes = bytes * BusBandwidthFactor(op, shape.ranks);
  std::vector<Candidate> candidates = Candidates(platform, op, shape, bytes);
  // NCCL_ALGO / NCCL_PROTO; p2p (algorithm bit 0) is not NCCL_ALGO's.
  const unsigned allowed = algorithms & platform.nccl.algorithms;
  std::vector<Candidate> chosen;
  for (const Candidate& c : candidates) {
    if ((c.algorithm_bit == 0 || (c.algorithm_bit & allowed)) &&
        (c.protocol->bit & platform.nccl.protocols))
      chosen.push_back(c);
  }
  if (!chosen.empty()) candidates = std::move(chosen);
  // Fewer channels than NCCL's own count (NCCL_MAX_NCHANNELS) carry their
  // share of the bus; send/recv applies the bound to its own channels.
  const double channel_share =
      op == NcclOp::kSendRecv ? 1.0 : NcclChannelShare(platform, shape.nodes);
  NcclEstimate best;
  best.time_us = std::numeric_limits<double>::infinity();
  for (const Candidate& c : candidates) {
    double bytes_per_us = c.bus_gbps * channel_share * 1e3;
    if (c.algorithm == "tree")
      bytes_per_us *= TreeCorrection(c.protocol, bytes);
    double transfer_us = bus_bytes / bytes_per_us;
    if (c.protocol == &kSimple && platform.pipeline_ramp_us > 0) {
      // Simple moves large steps: until about ramp_us of data is in flight a
      // channel's pipeline runs below its rate.
      transfer_us *= 1 + std::pow(platform.pipeline_ramp_us * bytes_per_us /
                                      std::max(bus_bytes, 1.0),
                                  kRampExponent);
    }
    const double t = c.latency_us + transfer_us;
    if (t < best.time_us) best = {t, c.algorithm, c.protocol->name};
  }
  if (!std::isfinite(best.time_us)) return {};
  return best;
}

std::optional<double> NcclChakraCostNs(const Platform& platform,
                                       ChakraProtoMsg::CollectiveCommType type,
                                       int64_t group_size, double bytes) {
  const std::optional<NcclOp> op = NcclOpForChakra(type);
  if (!op) return std::nullopt;
  if (group_size <= 1) return 0.0;
  // nccl-tests sizes an all-gather by its whole output.
  const double nccl_bytes = *op == NcclOp::kAllGather
                                ? bytes * static_cast<double>(group_size)
                                : bytes;
  return NcclCollective(platform, *op, group_size, nccl_bytes).time_us * 1e3;
}

double NcclPointToPointNs(const Platform& platform, double bytes,
                          int64_t world_size) {
  const int64_t gpn = std::max<int64_t>(1, platform.gpus_per_node);
  // Two ranks share a node; gpn + 1 ranks span two, so the pair crosses them.
  const int64_t ranks = world_size <= gpn ? 2 : gpn + 1;
  return NcclCollective(platform, NcclOp::kSendRecv, ranks, bytes).time_us *
         1e3;
}

}  // namespace et::sim
