// Refuses a Kineto trace recorded in another run than the execution trace it
// is given with. A trace of another run of the same program matches every op
// by name and order (the linker cannot tell), and that run's times and true
// step would be taken for this one's. Checked where both files say:
//   - the recording process: the ET's `pid`; the Kineto CPU ops' `pid`, or
//     the top-level `pid` examples/record_trace.py adds to a legacy trace;
//   - the rank: `distributedInfo.rank` against --rank (or the pattern's);
//   - the wall clock: the ET's `time` (local time) and the Kineto trace's
//     start (`baseTimeNanoseconds` + its first event, UTC) may differ by a
//     time-zone offset and the time between starting the observer and the
//     profiler, not by days;
//   - record-function ids: the ET's `rf_id` and Kineto's `Record function
//     id`, when both carry them, name the same ops.
#ifndef CONVERTER_KINETO_KINETO_IDENTITY_H_
#define CONVERTER_KINETO_KINETO_IDENTITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "converter/common/host_op.h"
#include "converter/kineto/kineto_trace.h"

namespace et::convert {

// What the ET says about the run that recorded it.
struct EtRun {
  std::string path;
  int64_t pid = -1;        // top-level `pid`; -1 absent
  std::string local_time;  // top-level `time`, "YYYY-MM-DD HH:MM:SS"
  int64_t rank = -1;       // --rank or the pattern's; -1 unknown
};

// Whether the two files share anything to compare (a pid, a rank, wall
// clocks): legacy traces recorded before examples/record_trace.py wrote a pid
// carry none, and then another run's trace would be accepted too.
bool CanCheckSameRun(const EtRun& et, const kineto::KinetoTrace& trace);

// OK, or one line naming both files and what differs.
absl::Status CheckSameRun(const EtRun& et, const std::string& kineto_path,
                          const kineto::KinetoTrace& trace,
                          const std::vector<HostOp>& ops,
                          const StringPool& pool);

}  // namespace et::convert

#endif  // CONVERTER_KINETO_KINETO_IDENTITY_H_
