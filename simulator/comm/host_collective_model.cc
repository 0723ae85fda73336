// gloo collectives on one host; see host_collective_model.h.
#include "simulator/comm/host_collective_model.h"

#include <algorithm>
#include <cmath>

namespace et::sim {

double HostCollectiveSteps(NcclOp op, int64_t ranks) {
  const double n = static_cast<double>(std::max<int64_t>(ranks, 2));
  switch (op) {
    case NcclOp::kAllReduce:
      return 2 * (n - 1);
    case NcclOp::kAllGather:
    case NcclOp::kReduceScatter:
    case NcclOp::kAllToAll:
      return n - 1;
    case NcclOp::kBroadcast:
      return std::ceil(std::log2(n));
    case NcclOp::kSendRecv:
      return 1;
  }
  return 1;
}

double HostCollectiveUs(const Platform& platform, NcclOp op, int64_t ranks,
                        double bytes) {
  const double bus_bytes = bytes * BusBandwidthFactor(op, ranks);
  const double bytes_per_us =
      platform.intra_gbps * platform.intra_efficiency * 1e3;
  return platform.launch_us +
         HostCollectiveSteps(op, ranks) * platform.net_hop_us +
         bus_bytes / bytes_per_us;
}

}  // namespace et::sim
