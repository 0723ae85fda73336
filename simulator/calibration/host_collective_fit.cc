// The host collective model fitted to a recording; see host_collective_fit.h.
#include "simulator/calibration/host_collective_fit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "simulator/comm/host_collective_model.h"

namespace et::sim {
namespace {

// A loopback transport moves at least 10 MB/s and at most a host's memory
// bandwidth (1 TB/s); one ring step waits at most 10 ms.
constexpr double kMinGbps = 0.01;
constexpr double kMaxGbps = 1000;
constexpr double kMaxHopUs = 10000;

struct Point {
  double steps, bus_bytes, us;  // us: less the per-call launch cost
  double weight;                // 1 / measured^2: relative error counts
};

double MedianError(const Platform& p,
                   const std::vector<NcclTestsLogRow>& rows) {
  std::vector<double> e;
  for (const NcclTestsLogRow& r : rows) {
    e.push_back(std::abs(
        HostCollectiveUs(p, r.op, r.ranks, static_cast<double>(r.bytes)) /
            r.time_us -
        1));
  }
  if (e.empty()) return 0;
  std::sort(e.begin(), e.end());
  const size_t n = e.size();
  return n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
}

// Seconds per bus byte for a fixed step latency (least squares through it).
double FitInverseRate(const std::vector<Point>& pts, double hop_us) {
  double num = 0, den = 0;
  for (const Point& q : pts) {
    num += q.weight * q.bus_bytes * (q.us - q.steps * hop_us);
    den += q.weight * q.bus_bytes * q.bus_bytes;
  }
  return den > 0 ? num / den : 0;
}

// A fit that misses the measurements more than the preset did is not kept.
HostCollectiveFit KeepTheBetter(const Platform& start, HostCollectiveFit fit) {
  if (fit.median_error_after <= fit.median_error_before) return fit;
  fit.platform = start;
  fit.hop_fitted = false;
  fit.kept_preset = true;
  fit.median_error_after = fit.median_error_before;
  return fit;
}

}  // namespace

HostCollectiveFit FitHostCollectives(const Platform& start,
                                     const std::vector<NcclTestsLogRow>& rows) {
  HostCollectiveFit fit;
  fit.platform = start;
  std::vector<Point> pts;
  for (const NcclTestsLogRow& r : rows) {
    if (r.time_us <= 0) continue;
    pts.push_back({HostCollectiveSteps(r.op, r.ranks),
                   r.bytes * BusBandwidthFactor(r.op, r.ranks),
                   std::max(0.0, r.time_us - start.launch_us),
                   1 / (r.time_us * r.time_us)});
  }
  // Two unknowns: the weighted normal equations of us = steps x hop + bus x
  // inv, each row's error relative to its time (a 4-byte broadcast and a
  // 5 MiB all-reduce count alike).
  double ss = 0, sb = 0, bb = 0, st = 0, bt = 0;
  for (const Point& q : pts) {
    ss += q.weight * q.steps * q.steps;
    sb += q.weight * q.steps * q.bus_bytes;
    bb += q.weight * q.bus_bytes * q.bus_bytes;
    st += q.weight * q.steps * q.us;
    bt += q.weight * q.bus_bytes * q.us;
  }
  const double det = ss * bb - sb * sb;
  double hop_us = start.net_hop_us;
  if (bb <= 0 && ss > 0) {
    // No row carries a size (a Kineto trace alone records none): the times
    // say nothing of bandwidth, so only the per-step latency is learned.
    fit.hop_fitted = true;
    fit.platform.net_hop_us = std::clamp(st / ss, 0.0, kMaxHopUs);
    fit.median_error_before = MedianError(start, rows);
    fit.median_error_after = MedianError(fit.platform, rows);
    return KeepTheBetter(start, std::move(fit));
  }
  // Relative test: rows of one shape (one size, or sizes in proportion to
  // their steps) cannot tell latency from bandwidth.
  if (det > 1e-9 * ss * bb) {
    hop_us = std::clamp((st * bb - sb * bt) / det, 0.0, kMaxHopUs);
    fit.hop_fitted = true;
  }
  double inv = FitInverseRate(pts, hop_us);
  if (inv <= 0) {  // the latency alone explains more than was measured
    hop_us = 0;
    inv = FitInverseRate(pts, 0);
  }
  const double gbps =
      inv > 0 ? std::clamp(1 / (inv * 1e3), kMinGbps, kMaxGbps) : kMaxGbps;
  fit.platform.intra_gbps = gbps;
  fit.platform.intra_efficiency = 1;
  fit.platform.net_hop_us = hop_us;
  fit.median_error_before = MedianError(start, rows);
  fit.median_error_after = MedianError(fit.platform, rows);
  return KeepTheBetter(start, std::move(fit));
}

std::string DescribeHostFit(const Platform& start, const HostCollectiveFit& fit,
                            size_t rows, const std::string& source) {
  return absl::StrFormat(
      "host collectives priced from %s (%d rows): bandwidth %.3g -> %.3g "
      "GB/s, per ring step %.0f -> %.0f us%s; median error against them "
      "%.1f%% before, %.1f%% after",
      source, rows, start.intra_gbps * start.intra_efficiency,
      fit.platform.intra_gbps, start.net_hop_us, fit.platform.net_hop_us,
      fit.kept_preset  ? " (the preset kept: the fit missed them more)"
      : fit.hop_fitted ? ""
                       : " (kept: one shape cannot tell it from bandwidth)",
      100 * fit.median_error_before, 100 * fit.median_error_after);
}

}  // namespace et::sim
