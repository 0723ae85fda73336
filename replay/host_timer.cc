// Calibrated host waits; see host_timer.h.
#include "replay/host_timer.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "base/checked_math.h"

namespace et::replay {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool ParseHostWaitMode(absl::string_view text, HostWaitMode* mode) {
  if (text == "spin")
    *mode = HostWaitMode::kSpin;
  else if (text == "sleep")
    *mode = HostWaitMode::kSleep;
  else if (text == "hybrid")
    *mode = HostWaitMode::kHybrid;
  else
    return false;
  return true;
}

HostTimer HostTimer::Calibrate(HostWaitMode mode) {
  HostTimer timer;
  timer.mode_ = mode;
  // 100 us sleeps: long enough to leave the CPU, short enough to be cheap. The
  // 90th percentile overshoot is what the hybrid mode leaves to spinning.
  constexpr int kSamples = 20;
  constexpr int64_t kSleepNs = 100000;
  std::vector<int64_t> over;
  over.reserve(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const int64_t t0 = NowNs();
    std::this_thread::sleep_for(std::chrono::nanoseconds(kSleepNs));
    over.push_back(std::max<int64_t>(0, NowNs() - t0 - kSleepNs));
  }
  std::sort(over.begin(), over.end());
  timer.sleep_overshoot_ns_ = over[kSamples * 9 / 10];
  return timer;
}

void HostTimer::WaitUntil(int64_t start_ns, int64_t duration_ns) const {
  if (duration_ns <= 0) return;
  // Saturating: start + duration must not wrap into the past (the plan bounds
  // durations to an hour, but the timer does not rely on it).
  const int64_t end_ns = SaturatingAdd(start_ns, duration_ns);
  if (mode_ != HostWaitMode::kSpin) {
    const int64_t slack =
        mode_ == HostWaitMode::kSleep ? 0 : sleep_overshoot_ns_;
    const int64_t sleep_ns = end_ns - NowNs() - slack;
    if (sleep_ns > 0)
      std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_ns));
    if (mode_ == HostWaitMode::kSleep) return;
  }
  while (NowNs() < end_ns) {
  }
}

}  // namespace et::replay
