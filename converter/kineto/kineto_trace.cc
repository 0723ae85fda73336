// Kineto JSON -> KinetoTrace with simdjson's On-Demand API: one pass over the
// text, no DOM, each event reduced to a KinetoEvent as it is read. Timestamps
// are parsed from the number's text so that "1712867402348256.123" keeps its
// nanoseconds (a double has only ~0.25 us of precision at 1.7e15).
#include "converter/kineto/kineto_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/checked_math.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "base/string_view_bridge.h"
#include "base/text_escape.h"

namespace et::kineto {
namespace {

namespace od = simdjson::ondemand;

// Times are kept within +-2^61 ns (73 years; epoch timestamps today are
// 1.7e18 ns < 2.3e18): then ts + dur, and the differences the linker takes,
// cannot overflow int64. A ts of 1e30 used to convert to INT64_MIN.
constexpr int64_t kMaxTimeNs = int64_t{1} << 61;

// 123, 123.4567, -5, 1.5e3 (microseconds) -> nanoseconds. Exact for
// plain decimals; exponent forms fall back to double. nullopt for junk and for
// values beyond kMaxTimeNs.
std::optional<int64_t> MicrosTextToNanos(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' ||
                           text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  // A string ("123") is not a number: the trace is refused, not guessed at.
  if (text.empty() || text.front() == '"') return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (text[0] == '-') {
    negative = true;
    i = 1;
  }
  int64_t whole = 0;
  size_t digits = 0;
  bool too_big = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    // Saturates instead of wrapping; the range check below refuses it.
    whole = SaturatingAdd(SaturatingMul(whole, 10), text[i] - '0');
    if (whole > kMaxTimeNs) too_big = true;
  }
  int64_t frac_ns = 0;
  if (i < text.size() && text[i] == '.') {
    int64_t scale = 100;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9';
         ++i, ++digits) {
      frac_ns += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size()) {  // exponent or junk: let strtod decide
    std::string copy(text);
    char* end = nullptr;
    double micros = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return std::nullopt;
    auto ns = DoubleToInt64(micros * 1000.0 + (micros < 0 ? -0.5 : 0.5));
    if (!ns || *ns > kMaxTimeNs || *ns < -kMaxTimeNs) return std::nullopt;
    return ns;
  }
  if (too_big) return std::nullopt;
  const int64_t ns = SaturatingAdd(SaturatingMul(whole, 1000), frac_ns);
  if (ns > kMaxTimeNs) return std::nullopt;
  return negative ? -ns : ns;
}

// An id or count; nullopt when it is not an integer that fits int64.
std::optional<int64_t> ReadInt(od::value& value) {
  od::json_type type;
  if (value.type().get(type)) return std::nullopt;
  if (type == od::json_type::number) {
    int64_t i;
    if (!value.get_int64().get(i)) return i;
    double d;
    if (!value.get_double().get(d)) return DoubleToInt64(d);
    return std::nullopt;
  }
  if (type == od::json_type::string) {  // some exporters quote ids
    std::string_view s;
    if (value.get_string().get(s)) return std::nullopt;
    int64_t i = 0;
    if (s.empty()) return std::nullopt;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      auto next = CheckedAdd(SaturatingMul(i, 10), c - '0');
      if (!next || *next == INT64_MAX) return std::nullopt;
      i = *next;
    }
    return i;
  }
  return std::nullopt;
}

// A JSON number that is an integer fitting int64, nothing else (no string,
// no fraction): for fields whose damage must be refused, not read as absent.
std::optional<int64_t> ReadStrictInt(od::value& value) {
  od::json_type type;
  if (value.type().get(type) || type != od::json_type::number)
    return std::nullopt;
  int64_t i;
  if (value.get_int64().get(i)) return std::nullopt;
  return i;
}

// A value for a message: its JSON text (40 bytes at most), or "an object" /
// "a list" (whose token is only the opening bracket).
std::string DescribeValue(od::value& value) {
  const std::string_view token = value.raw_json_token();
  if (!token.empty() && token[0] == '{') return "an object";
  if (!token.empty() && token[0] == '[') return "a list";
  return EscapeForPrint(ToAbsl(token.substr(0, 40)));
}

// A launch's grid or block: three integers in [0, 2^31) (CUDA's own bound on
// a grid's x), as every Kineto trace writes them; nullopt otherwise.
std::optional<std::array<int64_t, 3>> ReadDims(od::value& value) {
  od::array array;
  if (value.get_array().get(array)) return std::nullopt;
  std::array<int64_t, 3> dims = {1, 1, 1};
  size_t n = 0;
  for (auto element : array) {
    od::value v;
    if (element.get(v) || n == 3) return std::nullopt;
    std::optional<int64_t> i = ReadStrictInt(v);
    if (!i || *i < 0 || *i >= (int64_t{1} << 31)) return std::nullopt;
    dims[n++] = *i;
  }
  if (n != 3) return std::nullopt;
  return dims;
}

EventKind KindOfCategory(std::string_view cat) {
  std::string lower = absl::AsciiStrToLower(ToAbsl(cat));
  if (lower == "cpu_op" || lower == "operator") return EventKind::kCpuOp;
  if (lower == "user_annotation") return EventKind::kUserAnnotation;
  if (lower == "cuda_runtime" || lower == "cuda_driver" || lower == "runtime" ||
      lower == "hip_runtime" || lower == "hip_driver" || lower == "driver") {
    return EventKind::kRuntime;
  }
  if (lower == "kernel") return EventKind::kKernel;
  if (lower == "gpu_memcpy" || lower == "memcpy") return EventKind::kMemcpy;
  if (lower == "gpu_memset" || lower == "memset") return EventKind::kMemset;
  if (lower == "cuda_sync") return EventKind::kSync;
  return EventKind::kOther;
}

// A host op or annotation (no category: the legacy profiler's CPU ops).
bool IsHostRangeCategory(std::string_view cat) {
  const EventKind kind = KindOfCategory(cat);
  return kind == EventKind::kCpuOp || kind == EventKind::kUserAnnotation;
}

// The fields of one event before interning.
struct RawEvent {
  std::string_view ph;
  bool has_cat = false;
  std::string_view cat;
  bool has_ts = false;
  bool has_dur = false;
  bool has_name = false;
  KinetoEvent event;
  std::optional<std::array<int64_t, 3>> grid, block;
  // A `grid`/`block` written as text: Inductor's record of a Triton launch
  // ("grid(100,)"); only a host range may carry one.
  std::string_view text_dims_key, text_dims;
  bool has_comm = false;  // a "Collective name" arg was seen
  CommArgs comm;
  std::string_view input_dims;   // `Input Dims` JSON text, "" absent
  std::string_view input_types;  // `Input type` JSON text, "" absent
};

// The JSON text of an array value (consuming it), or "" when `value` is not
// an array. The end comes from simdjson's structural index, trimmed of the
// blanks before the next token.
std::string_view ArrayText(od::value& value) {
  const char* begin = value.raw_json_token().data();
  od::array array;
  std::string_view raw;
  if (*begin != '[' || value.get_array().get(array) != simdjson::SUCCESS ||
      array.raw_json().get(raw) != simdjson::SUCCESS) {
    return {};
  }
  const char* end = raw.data() + raw.size();
  while (end > begin && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' ||
                         end[-1] == '\t')) {
    --end;
  }
  if (end <= begin || end[-1] != ']') return {};
  return std::string_view(begin, static_cast<size_t>(end - begin));
}

// What a valid Kineto trace is, field by field; anything else is refused with
// one line naming the file, the event (#N, counting every event of
// traceEvents) and the field:
// - every event: `name` and `cat` strings; `pid`/`tid` integers within int64
//   or strings; `args` an object; `ts`/`dur` numbers within +-2^61 ns;
// - a complete ('X') event: `name`, `ts` and `dur` present, `dur` >= 0, the
//   end within 2^61 ns (instant and flow events have no `dur`; not read);
// - args: `correlation`, `External id`, `Record function id`, `Ev Idx`,
//   `bytes` integers in [0, 2^63); `stream`, `wait_on_stream`,
//   `wait_on_cuda_event_record_corr_id` in [-1, 2^63); `device` in
//   [0, 2^16); `grid`/`block` three integers in [0, 2^31); message sizes
//   counts (ParseCommArg);
// - `distributedInfo` an object, rank in [0, 2^20) and below world_size in
//   [1, 2^20]; `deviceProperties` a list of objects (ReadDeviceName).
// Read with a counted warning, as real traces write them: `tid` as a numeric
// string (Kineto of 2021), `bytes` as a numeric string (AMD's profiler).
class KinetoJsonParser {
 public:
  KinetoJsonParser(absl::string_view source, KinetoTrace* trace)
      : source_(source), trace_(trace) {}

  absl::Status ParseDocument(od::document& doc);

 private:
  absl::Status ParseEvents(od::array& events);
  absl::Status ParseEvent(od::object& object, RawEvent* raw);
  absl::Status ParseArgs(od::object& args, KinetoEvent* event, RawEvent* raw);
  absl::Status ParseCommArg(std::string_view key, od::value& value,
                            RawEvent* raw);
  absl::Status BadField(absl::string_view field, od::value& value,
                        absl::string_view want) const;
  // An args field that must be an integer in [lo, hi).
  absl::Status ReadArgInt(std::string_view key, od::value& value, int64_t lo,
                          int64_t hi, int64_t* out);
  absl::Status ReadPidOrTid(std::string_view key, od::value& value,
                            int64_t* out);
  // `key`'s value: a positive number of ms, or a numeric string.
  absl::StatusOr<double> ReadStepMs(od::value& value, std::string_view key);
  void ReadProfilerCalibration(od::value& value);
  void ReadPageFaultCalibration(od::value& value);
  absl::Status ReadDeviceName(od::value& value);
  absl::Status JsonError(simdjson::error_code code,
                         absl::string_view where) const;
  void Emit(RawEvent& raw);

  absl::string_view source_;
  KinetoTrace* trace_;
  int64_t event_index_ = 0;
  std::string_view last_name_;
  // What real traces write against the format, read and counted (docs/
  // bad-input.md): CPU tids as numeric strings (Kineto of 2021), byte counts
  // as numeric strings (AMD's ROCm profiler).
  int64_t string_tids_ = 0;
  int64_t string_bytes_ = 0;
  int64_t hex_streams_ = 0;  // ROCm 6's runtime calls: "stream": "0x0"

 public:
  // The counted oddities as warnings, after the parse.
  void AddReadWarnings() const;
};

void KinetoJsonParser::AddReadWarnings() const {
  if (string_tids_ > 0) {
    trace_->AddReadWarning(absl::StrFormat(
        "%s: %d events give 'tid' as a numeric string (as Kineto of 2021 "
        "wrote CPU threads): read as the thread's id",
        source_, string_tids_));
  }
  if (string_bytes_ > 0) {
    trace_->AddReadWarning(absl::StrFormat(
        "%s: %d events give 'bytes' as a numeric string (as AMD's ROCm "
        "profiler writes runtime calls): read as the byte count",
        source_, string_bytes_));
  }
  if (hex_streams_ > 0) {
    trace_->AddReadWarning(absl::StrFormat(
        "%s: %d events give 'stream' as a hexadecimal string (as ROCm 6 "
        "writes its runtime calls' stream handles): read as the number",
        source_, hex_streams_));
  }
}

absl::Status KinetoJsonParser::JsonError(simdjson::error_code code,
                                         absl::string_view where) const {
  const bool truncated = code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT ||
                         code == simdjson::UNCLOSED_STRING ||
                         code == simdjson::TAPE_ERROR ||
                         code == simdjson::EMPTY;
  if (truncated && event_index_ == 0) {
    // simdjson indexes the whole text before the first event is read, so a
    // file cut anywhere fails here, before any event.
    return absl::InvalidArgumentError(absl::StrFormat(
        "kineto: %s: truncated or malformed JSON: its brackets or strings do "
        "not close (a file cut short?) (simdjson: %s)",
        source_, simdjson::error_message(code)));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "kineto: %s: %s JSON %s, after %d events (simdjson: %s)", source_,
      truncated ? "truncated or malformed" : "malformed", where, event_index_,
      simdjson::error_message(code)));
}

// The first device's name and compute capability; anything unexpected leaves
// them unknown.
// One pass over the first device's fields, each checked: after a malformed
// field (a fuzzed trace: an object without its key) simdjson's iterator must
// not be used again, and looking fields up by name after one failed did
// (UBSan: a member access through a null parser). A list that is not devices
// is no device name; a device that is not JSON is an error.
//
// What a valid `deviceProperties` is: a list of objects, one per GPU, whose
// `name` is a string and whose `id`, `computeMajor` and `computeMinor` are
// integers in [0, 1024); other fields are not read. Anything else is refused,
// naming the device and the field.
absl::Status KinetoJsonParser::ReadDeviceName(od::value& value) {
  auto bad = [&](const std::string& where, od::value& v,
                 absl::string_view want) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kineto: %s: deviceProperties%s must be %s, got %s",
                        source_, where, want, DescribeValue(v)));
  };
  od::array devices;
  if (value.get_array().get(devices))
    return bad("", value, "a list of devices");
  int64_t index = 0;
  for (auto device : devices) {
    od::value device_value;
    if (auto err = device.get(device_value))
      return JsonError(err, "in 'deviceProperties'");
    const std::string at = absl::StrFormat("[%d]", index);
    od::object fields;
    if (device_value.get_object().get(fields))
      return bad(at, device_value, "an object");
    int64_t major = -1, minor = -1;
    for (auto field : fields) {
      std::string_view key;
      od::value field_value;
      simdjson::error_code err = field.unescaped_key().get(key);
      if (!err) err = field.value().get(field_value);
      if (err) return JsonError(err, "in 'deviceProperties'");
      if (key == "name") {
        std::string_view name;
        if (field_value.get_string().get(name))
          return bad(at + ".name", field_value, "a string");
        if (index == 0) trace_->set_device_name(std::string(name));
      } else if (key == "computeMajor" || key == "computeMinor" ||
                 key == "id") {
        std::optional<int64_t> n = ReadStrictInt(field_value);
        if (!n || *n < 0 || *n >= 1024) {
          return bad(absl::StrCat(at, ".", ToAbsl(key)), field_value,
                     "an integer in [0, 1024)");
        }
        if (key == "computeMajor") major = *n;
        if (key == "computeMinor") minor = *n;
      }
    }
    if (index == 0 && major > 0 && minor >= 0 && minor < 10)
      trace_->set_device_compute_capability(major * 10 + minor);
    ++index;
  }
  return absl::OkStatus();
}

namespace {

// A finite number >= 0, or a numeric string (profile.add_metadata stores
// strings); nullopt otherwise.
std::optional<double> ReadCount(od::value& value) {
  double x = 0;
  std::string_view text;
  bool ok = !value.get_double().get(x);
  if (!ok && !value.get_string().get(text))
    ok = absl::SimpleAtod(absl::string_view(text.data(), text.size()), &x);
  if (!ok || !std::isfinite(x) || x < 0) return std::nullopt;
  return x;
}

// The recorder's timing blocks (ms each): an array of positive numbers, at
// most kMaxTimingBlocks of them; anything else is read as absent (they only
// say how far the truth moves).
constexpr size_t kMaxTimingBlocks = 4096;
std::vector<double> ReadBlocksMs(od::value& value) {
  std::vector<double> blocks;
  od::array array;
  if (value.get_array().get(array)) return {};
  for (auto element : array) {
    double ms = 0;
    if (element.get_double().get(ms) || !std::isfinite(ms) || !(ms > 0) ||
        blocks.size() == kMaxTimingBlocks) {
      return {};
    }
    blocks.push_back(ms);
  }
  return blocks;
}

}  // namespace

// A number, or a numeric string (profile.add_metadata stores strings).
absl::StatusOr<double> KinetoJsonParser::ReadStepMs(od::value& value,
                                                    std::string_view key) {
  double ms = 0;
  std::string_view text;
  bool ok = !value.get_double().get(ms);
  if (!ok && !value.get_string().get(text))
    ok = absl::SimpleAtod(absl::string_view(text.data(), text.size()), &ms);
  if (!ok || !(ms > 0) || !std::isfinite(ms)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kineto: %s: '%s' must be a positive number of ms", source_, key));
  }
  return ms;
}

namespace {

// A calibration's per-probe times ({"view": 1.3, ...}, us per call).
absl::flat_hash_map<std::string, double> ReadProbeTimes(od::value& value) {
  absl::flat_hash_map<std::string, double> times;
  od::object object;
  if (value.get_object().get(object)) return times;
  for (auto field : object) {
    std::string_view key;
    double us = 0;
    if (field.unescaped_key().get(key) || field.value().get_double().get(us))
      return times;
    if (std::isfinite(us) && us >= 0) times[std::string(key)] = us;
  }
  return times;
}

// The median over the one-op probes of what `more` adds to `base` per call,
// in ns; -1 unless every probe is in both.
int64_t MedianProbeAddedNs(
    const absl::flat_hash_map<std::string, double>& base,
    const absl::flat_hash_map<std::string, double>& more) {
  std::vector<double> added_us;
  for (const char* probe : {"view", "add", "cat8"}) {
    auto b = base.find(probe), m = more.find(probe);
    if (b != base.end() && m != more.end())
      added_us.push_back(std::max(0.0, m->second - b->second));
  }
  if (added_us.size() != 3) return -1;
  std::sort(added_us.begin(), added_us.end());
  return std::llround(added_us[1] * 1000.0);
}

}  // namespace

// examples/record_trace.py's `profiler_calibration`: per probe op, us per
// call with no instrument, under the light profiler, and under the full one
// with the ET observer. Each instrument's cost per op is the median over the
// one-op probes of the difference; a malformed or partial calibration is
// read as absent (it only refines a documented figure).
void KinetoJsonParser::ReadProfilerCalibration(od::value& value) {
  od::object object;
  if (value.get_object().get(object)) return;
  absl::flat_hash_map<std::string, double> none, light, full;
  for (auto field : object) {
    std::string_view key;
    od::value inner;
    if (field.unescaped_key().get(key) || field.value().get(inner)) return;
    if (key == "none_us") none = ReadProbeTimes(inner);
    if (key == "light_us") light = ReadProbeTimes(inner);
    if (key == "full_us") full = ReadProbeTimes(inner);
  }
  const int64_t light_ns = MedianProbeAddedNs(none, light);
  if (light_ns < 0) return;
  trace_->set_light_profiler_ns_per_op(light_ns);
  trace_->set_probe_full_over_light_ns(MedianProbeAddedNs(light, full));
}

// examples/record_trace.py's `page_fault_calibration`: what one minor fault
// costs on the recording host. Like the profiler's calibration it only
// refines the model, so a malformed one is read as absent.
void KinetoJsonParser::ReadPageFaultCalibration(od::value& value) {
  od::object object;
  if (value.get_object().get(object)) return;
  for (auto field : object) {
    std::string_view key;
    od::value inner;
    if (field.unescaped_key().get(key) || field.value().get(inner)) return;
    if (key != "ns_per_fault") continue;
    if (std::optional<double> ns = ReadCount(inner); ns && *ns > 0)
      trace_->mutable_page_faults()->ns_per_fault = *ns;
    return;
  }
}

// A `pid` or `tid`: an integer that fits int64 (ids below 0 occur: HTA's
// traces hold a thread -549452224), or a string. Anything else (a fraction,
// 2^63, an array, an object, null) is refused.
absl::Status KinetoJsonParser::ReadPidOrTid(std::string_view key,
                                            od::value& value, int64_t* out) {
  od::json_type type;
  if (auto err = value.type().get(type)) return JsonError(err, "in pid/tid");
  if (type == od::json_type::string) {
    std::string_view s;
    if (auto err = value.get_string().get(s))
      return JsonError(err, "in pid/tid");
    // Kineto of 2021 writes a CPU thread's id as a string ("25738"): it is
    // that thread's id. Other strings ("stream 7", "Spans") name a track,
    // numbered below 0 so that they meet no recorded id.
    if (absl::SimpleAtoi(ToAbsl(s), out)) {
      if (key == "tid") ++string_tids_;
      return absl::OkStatus();
    }
    *out = -1 - static_cast<int64_t>(trace_->Intern(ToAbsl(s)));
    return absl::OkStatus();
  }
  std::optional<int64_t> i = ReadStrictInt(value);
  if (!i) {
    return BadField(ToAbsl(key), value,
                    "an integer that fits 64 bits, or a string");
  }
  *out = *i;
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ReadArgInt(std::string_view key,
                                          od::value& value, int64_t lo,
                                          int64_t hi, int64_t* out) {
  std::optional<int64_t> i = ReadStrictInt(value);
  if (!i || *i < lo || *i >= hi) {
    return BadField(ToAbsl(key), value,
                    hi == INT64_MAX
                        ? absl::StrFormat("an integer in [%d, 2^63)", lo)
                        : absl::StrFormat("an integer in [%d, %d)", lo, hi));
  }
  *out = *i;
  return absl::OkStatus();
}

// "event #N: 'field' must be WANT, got TEXT": a field whose value cannot mean
// what the format says.
absl::Status KinetoJsonParser::BadField(absl::string_view field,
                                        od::value& value,
                                        absl::string_view want) const {
  return absl::InvalidArgumentError(
      absl::StrFormat("kineto: %s: event #%d: '%s' must be %s, got %s", source_,
                      event_index_, field, want, DescribeValue(value)));
}

// The args of a record_param_comms event; names and groups that are not
// strings are left absent; message sizes must be counts.
absl::Status KinetoJsonParser::ParseCommArg(std::string_view key,
                                            od::value& value, RawEvent* raw) {
  CommArgs& comm = raw->comm;
  auto read_string = [&](std::string* out) {
    std::string_view s;
    if (!value.get_string().get(s)) *out = std::string(s);
  };
  if (key == "Collective name") {
    read_string(&comm.collective_name);
    raw->has_comm = true;
  } else if (key == "dtype") {
    read_string(&comm.dtype);
  } else if (key == "Process Group Description") {
    read_string(&comm.pg_desc);
  } else if (key == "Process Group Ranks") {
    read_string(&comm.group_ranks);
  } else if (key == "In msg nelems" || key == "Out msg nelems") {
    std::optional<int64_t> n = ReadStrictInt(value);
    if (!n || *n < 0) {
      return BadField(ToAbsl(key), value,
                      "a count of elements (an integer in [0, 2^63))");
    }
    (key == "In msg nelems" ? comm.in_msg_nelems : comm.out_msg_nelems) = *n;
  } else if (key == "Group size") {
    comm.group_size = ReadInt(value).value_or(-1);
  }
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ParseArgs(od::object& args, KinetoEvent* event,
                                         RawEvent* raw) {
  for (auto field : args) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key))
      return JsonError(err, "in args");
    od::value value;
    if (auto err = field.value().get(value)) return JsonError(err, "in args");
    // Ids are integers >= 0; streams and the cuda_sync fields also -1 (CUPTI
    // writes it for "none"); devices are GPU ordinals below 2^16.
    if (key == "correlation") {
      RETURN_IF_ERROR(
          ReadArgInt(key, value, 0, INT64_MAX, &event->correlation));
    } else if (key == "External id") {
      RETURN_IF_ERROR(
          ReadArgInt(key, value, 0, INT64_MAX, &event->external_id));
    } else if (key == "Record function id") {
      RETURN_IF_ERROR(
          ReadArgInt(key, value, 0, INT64_MAX, &event->record_function_id));
    } else if (key == "Ev Idx") {
      RETURN_IF_ERROR(ReadArgInt(key, value, 0, INT64_MAX, &event->ev_idx));
    } else if (key == "device") {
      RETURN_IF_ERROR(ReadArgInt(key, value, 0, 1 << 16, &event->device));
    } else if (key == "stream") {
      od::json_type type;
      std::string_view text;
      if (!value.type().get(type) && type == od::json_type::string &&
          !value.get_string().get(text) &&
          absl::StartsWith(ToAbsl(text), "0x")) {
        // ROCm 6 writes a runtime call's stream handle as "0x0".
        uint64_t handle = 0;
        if (!absl::SimpleHexAtoi(ToAbsl(text.substr(2)), &handle) ||
            handle > static_cast<uint64_t>(INT64_MAX)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "kineto: %s: event #%d: 'stream' must be an integer in [-1, "
              "2^63) or a hexadecimal handle, got \"%s\"",
              source_, event_index_,
              EscapeForPrint(ToAbsl(text.substr(0, 40)))));
        }
        event->stream = static_cast<int64_t>(handle);
        ++hex_streams_;
        continue;
      }
      RETURN_IF_ERROR(ReadArgInt(key, value, -1, INT64_MAX, &event->stream));
    } else if (key == "wait_on_stream") {
      RETURN_IF_ERROR(
          ReadArgInt(key, value, -1, INT64_MAX, &event->wait_on_stream));
    } else if (key == "wait_on_cuda_event_record_corr_id") {
      RETURN_IF_ERROR(ReadArgInt(key, value, -1, INT64_MAX,
                                 &event->wait_on_record_correlation));
    } else if (key == "bytes") {
      od::json_type type;
      if (!value.type().get(type) && type == od::json_type::string) {
        // AMD's ROCm profiler quotes its runtime calls' byte counts.
        std::optional<int64_t> n = ReadInt(value);
        if (!n) return BadField("bytes", value, "a count of bytes");
        event->bytes = *n;
        ++string_bytes_;
      } else {
        RETURN_IF_ERROR(ReadArgInt(key, value, 0, INT64_MAX, &event->bytes));
      }
    } else if (key == "grid" || key == "block") {
      // torch.compile's record around a Triton launch writes its grid as
      // Inductor's expression ("grid(100,)"): text, not the launch's dims
      // (its kernel event has those).
      od::json_type type;
      std::string_view text;
      if (!value.type().get(type) && type == od::json_type::string &&
          !value.get_string().get(text)) {
        raw->text_dims_key = key;
        raw->text_dims = text;
        continue;
      }
      std::optional<std::array<int64_t, 3>> dims = ReadDims(value);
      if (!dims) {
        return BadField(ToAbsl(key), value,
                        "a list of three integers in [0, 2^31)");
      }
      (key == "grid" ? raw->grid : raw->block) = dims;
    } else if (key == "Input Dims") {
      raw->input_dims = ArrayText(value);
    } else if (key == "Input type") {
      raw->input_types = ArrayText(value);
    } else if (key == "Process Group Name") {
      std::string_view s;
      if (!value.get_string().get(s))
        event->pg_name = trace_->Intern(ToAbsl(s));
    } else {
      RETURN_IF_ERROR(ParseCommArg(key, value, raw));
    }
  }
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ParseEvent(od::object& object, RawEvent* raw) {
  KinetoEvent& event = raw->event;
  for (auto field : object) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key))
      return JsonError(err, "in an event");
    od::value value;
    if (auto err = field.value().get(value))
      return JsonError(err, "in an event");
    if (key == "ph") {
      if (auto err = value.get_string().get(raw->ph))
        return JsonError(err, "in 'ph'");
    } else if (key == "cat") {
      if (value.get_string().get(raw->cat))
        return BadField("cat", value, "a string");
      raw->has_cat = true;
    } else if (key == "name") {
      std::string_view name;
      if (value.get_string().get(name))
        return BadField("name", value, "a string");
      event.name = trace_->Intern(ToAbsl(name));
      raw->has_name = true;
    } else if (key == "pid" || key == "tid") {
      RETURN_IF_ERROR(
          ReadPidOrTid(key, value, key == "pid" ? &event.pid : &event.tid));
    } else if (key == "ts" || key == "dur") {
      const std::string_view token = value.raw_json_token();
      auto ns = MicrosTextToNanos(token);
      if (!ns) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d: '%s' is not a number within +-2.3e15 us: "
            "%s",
            source_, event_index_, ToAbsl(key), ToAbsl(token.substr(0, 40))));
      }
      if (key == "ts") {
        event.ts_ns = *ns;
        raw->has_ts = true;
      } else {
        event.dur_ns = *ns;
        raw->has_dur = true;
      }
    } else if (key == "args") {
      od::object args;
      if (value.get_object().get(args))
        return BadField("args", value, "an object");
      RETURN_IF_ERROR(ParseArgs(args, &event, raw));
    }
  }
  return absl::OkStatus();
}

void KinetoJsonParser::Emit(RawEvent& raw) {
  KinetoEvent& event = raw.event;
  if (raw.has_cat) {
    event.kind = KindOfCategory(raw.cat);
  } else {
    // The legacy profiler writes no categories: all its events are CPU ops.
    event.kind = EventKind::kCpuOp;
  }
  if (event.kind == EventKind::kRuntime) {
    event.call = ClassifyRuntimeCall(trace_->name(event.name));
  }
  if (raw.grid || raw.block) {
    LaunchDims dims;
    dims.grid = raw.grid.value_or(std::array<int64_t, 3>{1, 1, 1});
    dims.block = raw.block.value_or(std::array<int64_t, 3>{1, 1, 1});
    event.dims = trace_->AddDims(dims);
  }
  if (raw.has_comm) event.comm = trace_->AddCommArgs(std::move(raw.comm));
  const bool host_op = event.kind == EventKind::kCpuOp ||
                       event.kind == EventKind::kUserAnnotation;
  if (host_op && !raw.input_dims.empty() && !raw.input_types.empty()) {
    event.inputs = trace_->AddOpInputs(
        {std::string(raw.input_dims), std::string(raw.input_types)});
  }
  trace_->AddEvent(event);
}

absl::Status KinetoJsonParser::ParseEvents(od::array& events) {
  for (auto element : events) {
    od::object object;
    if (auto err = element.get_object().get(object)) {
      return JsonError(err, absl::StrFormat("at event #%d", event_index_));
    }
    RawEvent raw;
    RETURN_IF_ERROR(ParseEvent(object, &raw));
    const bool complete = raw.ph == "X" || raw.ph.empty();
    if (complete) {
      // A complete event has a name, a start and a duration; its end stays
      // within the +-2^61 ns every time is held to. Instant ('i') and flow
      // ('s', 'f') events have no duration and are not read.
      if (!raw.has_name) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d: complete event without 'name'", source_,
            event_index_));
      }
      if (!raw.has_dur) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d ('%s'): complete event without 'dur'",
            source_, event_index_,
            EscapeForPrint(trace_->name(raw.event.name).substr(0, 80))));
      }
      if (raw.event.ts_ns > kMaxTimeNs - raw.event.dur_ns) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d ('%s'): 'ts' + 'dur' ends past 2^61 ns "
            "(2.3e15 us)",
            source_, event_index_,
            EscapeForPrint(trace_->name(raw.event.name).substr(0, 80))));
      }
      if (!raw.has_ts) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d ('%s'): complete event without 'ts'",
            source_, event_index_,
            EscapeForPrint(trace_->name(raw.event.name).substr(0, 80))));
      }
      if (raw.event.dur_ns < 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d ('%s'): negative 'dur' %.3f us", source_,
            event_index_,
            EscapeForPrint(trace_->name(raw.event.name).substr(0, 80)),
            raw.event.dur_ns / 1000.0));
      }
      if (!raw.text_dims_key.empty() && raw.has_cat &&
          !IsHostRangeCategory(raw.cat)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: event #%d: '%s' must be a list of three integers in "
            "[0, 2^31), got \"%s\"",
            source_, event_index_, ToAbsl(raw.text_dims_key),
            EscapeForPrint(ToAbsl(raw.text_dims.substr(0, 40)))));
      }
      Emit(raw);
    } else {
      trace_->CountIgnored();
    }
    ++event_index_;
  }
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ParseDocument(od::document& doc) {
  od::json_type type;
  if (auto err = doc.type().get(type)) return JsonError(err, "at the start");
  if (type == od::json_type::array) {
    trace_->set_legacy_array(true);
    od::array events;
    if (auto err = doc.get_array().get(events))
      return JsonError(err, "at the start");
    return ParseEvents(events);
  }
  if (type != od::json_type::object) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kineto: %s: not a Kineto trace: the top level is "
                        "neither an object nor an array",
                        source_));
  }
  od::object top;
  if (auto err = doc.get_object().get(top))
    return JsonError(err, "at the start");
  bool saw_events = false;
  for (auto field : top) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key))
      return JsonError(err, "at top level");
    od::value value;
    if (auto err = field.value().get(value))
      return JsonError(err, "at top level");
    if (key == "traceEvents") {
      od::array events;
      if (auto err = value.get_array().get(events)) {
        return JsonError(err, "in 'traceEvents' (not an array?)");
      }
      RETURN_IF_ERROR(ParseEvents(events));
      saw_events = true;
    } else if (key == "deviceProperties") {
      RETURN_IF_ERROR(ReadDeviceName(value));
    } else if (key == "unprofiled_step_ms") {
      ASSIGN_OR_RETURN(const double ms, ReadStepMs(value, key));
      trace_->set_unprofiled_step_ms(ms);
    } else if (key == "unprofiled_step_after_ms") {
      ASSIGN_OR_RETURN(const double ms, ReadStepMs(value, key));
      trace_->set_unprofiled_step_after_ms(ms);
    } else if (key == "unprofiled_step_blocks_ms") {
      trace_->set_unprofiled_step_blocks_ms(ReadBlocksMs(value));
    } else if (key == "profiler_calibration") {
      ReadProfilerCalibration(value);
    } else if (key == "page_fault_calibration") {
      ReadPageFaultCalibration(value);
    } else if (key == "unprofiled_page_faults_per_step") {
      trace_->mutable_page_faults()->unprofiled_per_step =
          ReadCount(value).value_or(-1);
    } else if (key == "profiled_page_faults_per_step") {
      trace_->mutable_page_faults()->profiled_per_step =
          ReadCount(value).value_or(-1);
    } else if (key == "unprofiled_peak_bytes") {
      trace_->set_unprofiled_memory(ReadInt(value).value_or(-1),
                                    trace_->unprofiled_start_bytes());
    } else if (key == "unprofiled_start_bytes") {
      trace_->set_unprofiled_memory(trace_->unprofiled_peak_bytes(),
                                    ReadInt(value).value_or(-1));
    } else if (key == "baseTimeNanoseconds") {
      trace_->set_base_time_ns(ReadInt(value).value_or(0));
    } else if (key == "pid") {
      trace_->set_process_id(ReadInt(value).value_or(-1));
    } else if (key == "distributedInfo") {
      od::object info;
      if (value.get_object().get(info)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kineto: %s: distributedInfo must be an object, got %s", source_,
            DescribeValue(value)));
      }
      for (auto info_field : info) {
        std::string_view info_key;
        od::value info_value;
        if (info_field.unescaped_key().get(info_key) ||
            info_field.value().get(info_value)) {
          break;
        }
        // A rank or a world size: an integer in [lo, hi), else an error.
        auto read_count = [&](int64_t lo, int64_t hi,
                              int64_t* out) -> absl::Status {
          std::optional<int64_t> n = ReadStrictInt(info_value);
          if (n && *n >= lo && *n < hi) {
            *out = *n;
            return absl::OkStatus();
          }
          return absl::InvalidArgumentError(absl::StrFormat(
              "kineto: %s: distributedInfo.%s must be an integer in [%d, "
              "%d), got %s",
              source_, info_key, lo, hi,
              EscapeForPrint(
                  ToAbsl(info_value.raw_json_token().substr(0, 40)))));
        };
        int64_t count = 0;
        if (info_key == "rank") {
          RETURN_IF_ERROR(read_count(0, kMaxRanks, &count));
          trace_->set_rank(count);
        } else if (info_key == "world_size") {
          RETURN_IF_ERROR(read_count(1, kMaxRanks + 1, &count));
          trace_->set_world_size(count);
        } else if (info_key == "pg_config") {
          std::string_view text;
          if (!simdjson::to_json_string(info_value).get(text))
            trace_->set_pg_config_json(std::string(text));
        }
      }
    }
  }
  if (!saw_events) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kineto: %s: no 'traceEvents' array: not a Kineto/Chrome trace",
        source_));
  }
  if (trace_->world_size() > 0 && trace_->rank() >= trace_->world_size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kineto: %s: distributedInfo.rank %d is not below "
                        "distributedInfo.world_size %d",
                        source_, trace_->rank(), trace_->world_size()));
  }
  return absl::OkStatus();
}

}  // namespace

RuntimeCall ClassifyRuntimeCall(absl::string_view name) {
  // Strip the API prefix: cudaX, cuX (driver), hipX, hipExtX.
  absl::string_view base = name;
  for (absl::string_view prefix : {"cuda", "hipExt", "hip", "cu"}) {
    if (absl::StartsWith(base, prefix)) {
      base.remove_prefix(prefix.size());
      break;
    }
  }
  if (absl::StrContains(base, "LaunchKernel") ||
      absl::StrContains(base, "LaunchCooperative") ||
      absl::StartsWith(base, "ModuleLaunch") ||
      absl::StartsWith(base, "GraphLaunch") ||
      absl::StartsWith(base, "LaunchHostFunc")) {
    return RuntimeCall::kLaunch;
  }
  if (absl::StartsWith(base, "Memcpy") || absl::StartsWith(base, "Memset")) {
    return RuntimeCall::kLaunch;
  }
  if (absl::StartsWith(base, "EventRecord")) return RuntimeCall::kEventRecord;
  if (absl::StartsWith(base, "StreamWaitEvent"))
    return RuntimeCall::kStreamWaitEvent;
  if (absl::StartsWith(base, "StreamSynchronize"))
    return RuntimeCall::kStreamSynchronize;
  if (absl::StartsWith(base, "DeviceSynchronize") ||
      absl::StartsWith(base, "CtxSynchronize")) {
    return RuntimeCall::kDeviceSynchronize;
  }
  if (absl::StartsWith(base, "EventSynchronize"))
    return RuntimeCall::kEventSynchronize;
  return RuntimeCall::kNone;
}

int32_t KinetoTrace::AddOpInputs(OpInputs inputs) {
  op_inputs_.push_back(std::move(inputs));
  return static_cast<int32_t>(op_inputs_.size() - 1);
}

int32_t KinetoTrace::AddCommArgs(CommArgs args) {
  comm_args_.push_back(std::move(args));
  return static_cast<int32_t>(comm_args_.size() - 1);
}

std::optional<uint32_t> KinetoTrace::FindName(absl::string_view text) const {
  return names_.Find(text);
}

uint32_t KinetoTrace::Intern(absl::string_view text) {
  return names_.Intern(text);
}

int32_t KinetoTrace::AddDims(const LaunchDims& dims) {
  dims_.push_back(dims);
  return static_cast<int32_t>(dims_.size() - 1);
}

absl::StatusOr<KinetoTrace> KinetoTrace::Parse(std::string json,
                                               absl::string_view source) {
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: give it room in
  // place.
  const size_t length = json.size();
  json.resize(length + simdjson::SIMDJSON_PADDING, ' ');
  simdjson::padded_string_view padded(json.data(), length, json.size());
  od::parser parser;
  KinetoTrace trace;
  KinetoJsonParser reader(source, &trace);
  od::document doc;
  if (auto err = parser.iterate(padded).get(doc)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kineto: %s: %s (simdjson: %s)", source,
        err == simdjson::UNCLOSED_STRING
            ? "truncated or malformed JSON: a string does not close (a file "
              "cut short?)"
            : "malformed JSON",
        simdjson::error_message(err)));
  }
  RETURN_IF_ERROR(reader.ParseDocument(doc));
  reader.AddReadWarnings();
  // A location after the root value (simdjson's own at_end() is not in
  // every release) is a token past it.
  if (!doc.current_location().error()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kineto: %s: data after the end of the trace's JSON document (two "
        "documents concatenated?)",
        source));
  }
  return trace;
}

absl::StatusOr<KinetoTrace> KinetoTrace::Load(const std::string& path) {
  std::string json;
  RETURN_IF_ERROR(ReadFileMaybeGzip(path, &json));
  return Parse(std::move(json), path);
}

}  // namespace et::kineto
