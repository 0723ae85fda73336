// NCCL's send/recv channel count, written for et-sim from the structure of
// NCCL's src/enqueue.cc (addP2pToPlan, scheduleP2pTasksToPlan) and
// src/graph/paths.cc (ncclTopoGetNchannels, ncclTopoComputeP2pChannels).
#include "simulator/comm/nccl_p2p_channels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/numeric/bits.h"

namespace et::sim {
namespace {

// NVLink2, 3 and 4 carry 25 GB/s per link and direction (data sheets).
constexpr double kNvlinkLinkGBps = 25;
// NCCL_P2P_PER_CHANNEL_NET_BW: the GB/s NCCL counts one network channel to
// carry when it sizes the channels per network peer.
constexpr double kNetChannelGBps = 14;
// NCCL_MAX_DEV_WORK_P2P_PER_BATCH: peers one channel serves in a round.
constexpr int64_t kPeersPerBatch = 8;
// p2p channels of a communicator across nodes: NCCL logs "16 coll channels,
// ..., 16 p2p channels" on multi-node H100 jobs with a NIC per GPU.
constexpr int64_t kNetCommChannels = 16;
// One node: NCCL's cap on p2p channels (32 logged on HGX-H100 and A100).
constexpr int64_t kMaxNodeCommChannels = 32;
// Step sizes (NCCL_P2P_NET_CHUNKSIZE, NCCL_P2P_NVL_CHUNKSIZE).
constexpr double kNetStepBytes = 128 * 1024;
constexpr double kNvlinkStepBytes = 512 * 1024;

int64_t Pow2Up(int64_t n) {
  return static_cast<int64_t>(absl::bit_ceil(static_cast<uint64_t>(n)));
}

// NCCL's own channel count, before the user's bounds.
int64_t OwnCommChannels(const Platform& platform, int64_t nodes) {
  if (nodes > 1) return kNetCommChannels;
  const int64_t links =
      std::max<int64_t>(1, std::llround(platform.intra_gbps / kNvlinkLinkGBps));
  return std::min(kMaxNodeCommChannels, Pow2Up(2 * links));
}

}  // namespace

int64_t NcclCommChannels(const Platform& platform, int64_t nodes) {
  int64_t channels = OwnCommChannels(platform, nodes);
  if (platform.nccl.min_channels > 0)
    channels = std::max(channels, platform.nccl.min_channels);
  if (platform.nccl.max_channels > 0)
    channels = std::min(channels, platform.nccl.max_channels);
  return channels;
}

double NcclChannelShare(const Platform& platform, int64_t nodes) {
  return std::min(1.0,
                  static_cast<double>(NcclCommChannels(platform, nodes)) /
                      static_cast<double>(OwnCommChannels(platform, nodes)));
}

P2pChannels NcclP2pChannels(const Platform& platform, int64_t ranks,
                            int64_t nodes, double bytes) {
  const bool multi = nodes > 1;
  // The communicator's p2p channels and the most one peer gets.
  const int64_t comm_channels = NcclCommChannels(platform, nodes);
  int64_t per_peer;
  if (multi) {
    const double gpu_nic_gbps = platform.nics_per_node * platform.nic_gbits /
                                8 /
                                std::max<int64_t>(1, platform.gpus_per_node);
    per_peer = Pow2Up(std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(gpu_nic_gbps / kNetChannelGBps))));
    // All peers must fit one round of the communicator's channels.
    const int64_t batches = (ranks + kPeersPerBatch - 1) / kPeersPerBatch;
    while (per_peer * batches > comm_channels && per_peer > 1) per_peer /= 2;
  } else {
    per_peer = comm_channels;
  }
  // The floor: one channel per operation when every rank sends at once.
  int64_t floor = per_peer;
  while (floor * ranks > comm_channels && floor > 1) floor /= 2;
  // Parts of at least min_part; more channels while a part exceeds max_part.
  const double step = multi ? kNetStepBytes : kNvlinkStepBytes;
  const double min_part = multi ? step / 2 : step / 8;
  const double max_part = multi ? step : step * 32;
  int64_t channels = std::max<int64_t>(
      1, std::min<double>(floor, std::ceil(std::max(bytes, 1.0) / min_part)));
  double part = std::max(min_part, bytes / channels);
  while (part > max_part && channels <= per_peer / 2) {
    channels *= 2;
    part = bytes / channels;
  }
  const double per_channel =
      multi ? kNetChannelGBps : kNvlinkLinkGBps * platform.intra_efficiency;
  return {channels, channels * per_channel};
}

}  // namespace et::sim
