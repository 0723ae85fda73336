// How many channels NCCL gives one send/recv peer, and the rate they carry.
// NCCL stripes a point-to-point transfer over a number of channels that grows
// with its size (src/enqueue.cc, addP2pToPlan) from a floor set by the
// communicator's size (scheduleP2pTasksToPlan), up to the channels per peer
// it set at init (src/graph/paths.cc). Each channel moves about one link's
// worth, so a mid-size send between two of eight H100s runs at a fraction of
// NVLink: 4 channels at 32-64 MiB, 8 at 128 MiB, 16 at 256 MiB (log 18).
// Constants and sources: docs/collective-model.md, "Send/recv channels".
#ifndef SIMULATOR_COMM_NCCL_P2P_CHANNELS_H_
#define SIMULATOR_COMM_NCCL_P2P_CHANNELS_H_

#include <cstdint>

#include "simulator/platform/platform.h"

namespace et::sim {

struct P2pChannels {
  int64_t channels = 1;  // channels one peer's transfer is striped over
  double gbps = 0;       // what they carry together, before the link's cap
};

// The channels a send (or receive) of `bytes` to one peer uses in a
// communicator of `ranks` ranks on `nodes` nodes of the platform, and their
// rate: across nodes NCCL's 14 GB/s per network channel, inside a node one
// NVLink's rate x the platform's intra-node efficiency.
P2pChannels NcclP2pChannels(const Platform& platform, int64_t ranks,
                            int64_t nodes, double bytes);

// The channels NCCL opens for the communicator on `nodes` nodes of the
// platform: its own count (one node: min(32, pow2up(2 x NVLink links));
// across nodes 16), within the platform's NCCL_MIN/MAX_NCHANNELS bounds.
int64_t NcclCommChannels(const Platform& platform, int64_t nodes);

// The share of NCCL's own bus bandwidth a collective keeps under the
// platform's channel bounds: fewer channels than NCCL's own count carry
// their share of it; more carry no more than the links.
double NcclChannelShare(const Platform& platform, int64_t nodes);

}  // namespace et::sim

#endif  // SIMULATOR_COMM_NCCL_P2P_CHANNELS_H_
