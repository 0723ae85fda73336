// A Kineto (torch.profiler Chrome trace) file reduced to what linking needs:
// one compact record per complete ('X') event, with names interned once and the
// handful of `args` the linker reads parsed into typed fields. Accepts the
// current format, the 2021 one (capitalised categories
// `Operator`/`Kernel`/`Runtime`/`Memcpy`/`Memset`), the legacy profiler's bare
// event array without `cat` (every event a CPU op), HIP names, several
// processes and devices. Immutable after parsing; safe to share between
// threads.
#ifndef CONVERTER_KINETO_KINETO_TRACE_H_
#define CONVERTER_KINETO_KINETO_TRACE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/string_pool.h"

namespace et::kineto {

enum class EventKind : uint8_t {
  kCpuOp,           // cpu_op / Operator / legacy events without `cat`
  kUserAnnotation,  // user_annotation (record_function ranges, ProfilerStep#N)
  kRuntime,         // cuda_runtime / cuda_driver / Runtime / hip_runtime calls
  kKernel,
  kMemcpy,
  kMemset,
  kSync,  // cuda_sync: CUPTI's record of what a sync call waited on
  kOther,
};

// What a runtime call does, from its name (CUDA runtime, driver or HIP
// spelling).
enum class RuntimeCall : uint8_t {
  kNone,
  kLaunch,  // kernel launches and async memcpy/memset: things that enqueue GPU
            // work
  kEventRecord,
  kStreamWaitEvent,
  kStreamSynchronize,
  kDeviceSynchronize,
  kEventSynchronize,
};
RuntimeCall ClassifyRuntimeCall(absl::string_view name);

// The collective a `record_param_comms` event describes, from its args (only
// what a graph without an ET needs; empty / -1 when absent).
struct CommArgs {
  std::string collective_name;  // "allreduce", "send", ...
  std::string dtype;            // "BFloat16", "Float", ...
  std::string pg_desc;          // "Process Group Description"
  std::string group_ranks;      // "Process Group Ranks", e.g. "[0, 1, 2, 3]"
  int64_t in_msg_nelems = -1;
  int64_t out_msg_nelems = -1;
  int64_t group_size = -1;
};

// An op's argument shapes and types as `record_shapes=True` writes them
// (`Input Dims`, `Input type`), kept as the trace's JSON text: the Kineto-only
// import writes them as the op's input shapes and types.
struct OpInputs {
  std::string dims_json;   // [[2873320], [], []]
  std::string types_json;  // ["c10::BFloat16", "", "Scalar"]
};

// One complete event. 128 bytes: a 1M-event trace costs ~128 MB, far below its
// JSON.
struct KinetoEvent {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t pid = 0;  // string pids ("Spans", "CPU functions") get ids < 0
  int64_t tid = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
  int64_t record_function_id = -1;
  int64_t ev_idx = -1;
  int64_t device = -1;
  int64_t stream = -1;
  int64_t wait_on_stream = -1;  // cuda_sync
  int64_t wait_on_record_correlation =
      -1;  // cuda_sync: the cudaEventRecord waited on
  int64_t bytes = -1;
  uint32_t name = 0;     // id in the trace's string pool
  uint32_t pg_name = 0;  // 0 = ""
  int32_t dims = -1;     // index into KinetoTrace::dims(); -1 none
  int32_t comm = -1;     // index into KinetoTrace::comm_args(); -1 none
  int32_t inputs = -1;   // index into KinetoTrace::op_inputs(); -1 none
  EventKind kind = EventKind::kOther;
  RuntimeCall call = RuntimeCall::kNone;
};

struct LaunchDims {
  std::array<int64_t, 3> grid;
  std::array<int64_t, 3> block;
};

// Minor page faults a step, as examples/record_trace.py counts them: in the
// unprofiled run the truth comes from (`unprofiled_page_faults_per_step`), in
// the recorded steps (`profiled_page_faults_per_step`), and what one costs on
// the recording host (`page_fault_calibration.ns_per_fault`); -1 absent.
struct RecordedPageFaults {
  double unprofiled_per_step = -1;
  double profiled_per_step = -1;
  double ns_per_fault = -1;
};

class KinetoTrace {
 public:
  // Parses a whole JSON text. `source` names it in error messages (usually the
  // path).
  static absl::StatusOr<KinetoTrace> Parse(std::string json,
                                           absl::string_view source);
  // Reads a file, plain or gzip.
  static absl::StatusOr<KinetoTrace> Load(const std::string& path);

  const std::vector<KinetoEvent>& events() const { return events_; }
  const std::vector<LaunchDims>& dims() const { return dims_; }
  const std::vector<CommArgs>& comm_args() const { return comm_args_; }
  // CPU ops' recorded shapes (KinetoEvent::inputs).
  const std::vector<OpInputs>& op_inputs() const { return op_inputs_; }
  // distributedInfo.pg_config as JSON text (the process groups), "" absent.
  const std::string& pg_config_json() const { return pg_config_json_; }
  absl::string_view name(uint32_t id) const { return names_.Get(id); }
  size_t name_count() const { return names_.size(); }
  // The id of `text` when some event uses it as a name.
  std::optional<uint32_t> FindName(absl::string_view text) const;
  int64_t rank() const { return rank_; }  // distributedInfo.rank; -1 absent
  // distributedInfo.world_size; 0 absent.
  int64_t world_size() const { return world_size_; }
  // Top-level `baseTimeNanoseconds` (Kineto: event `ts` + this = wall clock
  // since the epoch); 0 absent.
  int64_t base_time_ns() const { return base_time_ns_; }
  // Top-level `pid`, which examples/record_trace.py adds to a legacy trace
  // (its events say "CPU functions"); -1 absent.
  int64_t process_id() const { return process_id_; }
  // The step time of the same program without a profiler, in ms, when the
  // recorder stored it (top-level `unprofiled_step_ms`, examples/
  // record_trace.py); -1 absent.
  double unprofiled_step_ms() const { return unprofiled_step_ms_; }
  // The same, timed again after the recording (`unprofiled_step_after_ms`);
  // -1 absent.
  double unprofiled_step_after_ms() const { return unprofiled_step_after_ms_; }
  // Each timing block's mean step behind `unprofiled_step_ms` (its median):
  // how far the truth itself moves (`unprofiled_step_blocks_ms`); empty when
  // absent or malformed.
  const std::vector<double>& unprofiled_step_blocks_ms() const {
    return unprofiled_step_blocks_ms_;
  }
  // The memory truth beside it (top-level `unprofiled_peak_bytes` and
  // `unprofiled_start_bytes`, docs/memory-model.md); -1 absent.
  int64_t unprofiled_peak_bytes() const { return unprofiled_peak_bytes_; }
  int64_t unprofiled_start_bytes() const { return unprofiled_start_bytes_; }
  // What the light profiler adds per op, in ns, from the recorder's
  // `profiler_calibration` (measured in the recording process); -1 absent.
  int64_t light_profiler_ns_per_op() const { return light_profiler_ns_; }
  // What the full profiler (with the ET observer) adds per probe op beyond
  // the light one, in ns, from the same calibration; -1 absent.
  int64_t probe_full_over_light_ns() const { return probe_full_over_light_ns_; }
  // The minor page faults the recorder counted (docs/step-model.md, "Page
  // faults").
  const RecordedPageFaults& page_faults() const { return page_faults_; }
  // The first GPU's name (deviceProperties[0].name), "" when absent.
  const std::string& device_name() const { return device_name_; }
  // Its compute capability, major * 10 + minor (computeMajor/computeMinor);
  // 0 when absent.
  int64_t device_compute_capability() const { return device_cc_; }
  bool is_legacy_array() const { return legacy_array_; }
  int64_t ignored_events() const {
    return ignored_events_;
  }  // M, s/f, i, B/E, ...
  // What the trace writes against the format but real traces do carry, read
  // anyway and counted, one line each (docs/bad-input.md): for the
  // converter's warnings.
  const std::vector<std::string>& read_warnings() const {
    return read_warnings_;
  }

  // Building (the parser's interface).
  uint32_t Intern(absl::string_view text);
  void AddEvent(const KinetoEvent& event) { events_.push_back(event); }
  // Room for `n` events, when the builder knows how many it will add (growing
  // a vector of a million events copies it ~20 times over).
  void ReserveEvents(size_t n) { events_.reserve(n); }
  int32_t AddDims(const LaunchDims& dims);
  int32_t AddCommArgs(CommArgs args);
  int32_t AddOpInputs(OpInputs inputs);
  void set_pg_config_json(std::string json) {
    pg_config_json_ = std::move(json);
  }
  void set_rank(int64_t rank) { rank_ = rank; }
  void set_world_size(int64_t world) { world_size_ = world; }
  void set_base_time_ns(int64_t ns) { base_time_ns_ = ns; }
  void set_process_id(int64_t pid) { process_id_ = pid; }
  void set_unprofiled_step_ms(double ms) { unprofiled_step_ms_ = ms; }
  void set_unprofiled_step_after_ms(double ms) {
    unprofiled_step_after_ms_ = ms;
  }
  void set_unprofiled_step_blocks_ms(std::vector<double> blocks) {
    unprofiled_step_blocks_ms_ = std::move(blocks);
  }
  void set_unprofiled_memory(int64_t peak_bytes, int64_t start_bytes) {
    unprofiled_peak_bytes_ = peak_bytes;
    unprofiled_start_bytes_ = start_bytes;
  }
  void set_light_profiler_ns_per_op(int64_t ns) { light_profiler_ns_ = ns; }
  void set_probe_full_over_light_ns(int64_t ns) {
    probe_full_over_light_ns_ = ns;
  }
  RecordedPageFaults* mutable_page_faults() { return &page_faults_; }
  void set_device_name(std::string name) { device_name_ = std::move(name); }
  void set_device_compute_capability(int64_t cc) { device_cc_ = cc; }
  void set_legacy_array(bool legacy) { legacy_array_ = legacy; }
  void CountIgnored() { ++ignored_events_; }
  void AddReadWarning(std::string warning) {
    read_warnings_.push_back(std::move(warning));
  }

 private:
  std::vector<KinetoEvent> events_;
  std::vector<LaunchDims> dims_;
  std::vector<CommArgs> comm_args_;
  std::vector<OpInputs> op_inputs_;
  std::string pg_config_json_;
  // Names by id, and the reverse map; a trace has a few thousand distinct
  // names.
  StringPool names_;
  int64_t rank_ = -1;
  int64_t world_size_ = 0;
  int64_t base_time_ns_ = 0;
  int64_t process_id_ = -1;
  double unprofiled_step_ms_ = -1;
  double unprofiled_step_after_ms_ = -1;
  std::vector<double> unprofiled_step_blocks_ms_;
  int64_t unprofiled_peak_bytes_ = -1;
  int64_t unprofiled_start_bytes_ = -1;
  int64_t light_profiler_ns_ = -1;
  int64_t probe_full_over_light_ns_ = -1;
  RecordedPageFaults page_faults_;
  std::string device_name_;
  int64_t device_cc_ = 0;
  bool legacy_array_ = false;
  int64_t ignored_events_ = 0;
  std::vector<std::string> read_warnings_;
};

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_KINETO_TRACE_H_
