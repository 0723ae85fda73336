// Holds the host thread for a recorded duration. Busy-waiting is exact but
// burns a core (four oversubscribed ranks on a 2-core CI machine would then
// slow each other down); sleeping frees the core but overshoots by the
// scheduler's wake-up latency. The hybrid mode sleeps for the duration minus
// the calibrated overshoot and spins the rest. Immutable after Calibrate();
// thread-safe.
#ifndef REPLAY_HOST_TIMER_H_
#define REPLAY_HOST_TIMER_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace et::replay {

// Monotonic clock in nanoseconds.
int64_t NowNs();

enum class HostWaitMode { kSpin, kSleep, kHybrid };

// Parses "spin", "sleep", "hybrid".
bool ParseHostWaitMode(absl::string_view text, HostWaitMode* mode);

class HostTimer {
 public:
  // Measures the sleep overshoot on this machine (20 short sleeps, ~2 ms in
  // all).
  static HostTimer Calibrate(HostWaitMode mode);

  // Returns once `duration_ns` has passed since `start_ns` (a NowNs() value).
  void WaitUntil(int64_t start_ns, int64_t duration_ns) const;

  int64_t sleep_overshoot_ns() const { return sleep_overshoot_ns_; }
  HostWaitMode mode() const { return mode_; }

 private:
  HostWaitMode mode_ = HostWaitMode::kHybrid;
  int64_t sleep_overshoot_ns_ = 0;
};

}  // namespace et::replay

#endif  // REPLAY_HOST_TIMER_H_
