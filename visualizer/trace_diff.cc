// Two TraceReports side by side; see trace_diff.h.
#include "visualizer/trace_diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

// "+3.33 ms", "-120 us": a signed HumanDuration.
std::string SignedDuration(int64_t ns) {
  return absl::StrCat(ns < 0 ? "-" : "+", HumanDuration(std::llabs(ns)));
}

std::string Change(int64_t before, int64_t after) {
  if (before <= 0) return "new";
  return absl::StrFormat("%+.1f%%", 100.0 * (after - before) / before);
}

}  // namespace

TraceDiff DiffReports(const TraceReport& before, const TraceReport& after) {
  TraceDiff d;
  d.before = before.inputs.empty() ? "" : before.inputs.front();
  d.after = after.inputs.empty() ? "" : after.inputs.front();
  d.before_nodes = before.nodes;
  d.after_nodes = after.nodes;
  d.before_self_ns = before.total_self_ns;
  d.after_self_ns = after.total_self_ns;
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, OpDelta> ops;
  std::map<std::string, DeviceDelta> devices;
  for (const OpGroupStats& op : before.ops) {
    OpDelta& o = ops[{op.name, op.device, op.input_shapes}];
    o.name = op.name;
    o.device = op.device;
    o.input_shapes = op.input_shapes;
    o.before_calls = op.calls;
    o.before_self_ns = op.self_ns;
    o.before_total_ns = op.total_ns;
    devices[op.device].before_self_ns += op.self_ns;
  }
  for (const OpGroupStats& op : after.ops) {
    OpDelta& o = ops[{op.name, op.device, op.input_shapes}];
    o.name = op.name;
    o.device = op.device;
    o.input_shapes = op.input_shapes;
    o.after_calls = op.calls;
    o.after_self_ns = op.self_ns;
    o.after_total_ns = op.total_ns;
    devices[op.device].after_self_ns += op.self_ns;
  }
  for (auto& [key, o] : ops) {
    o.change = o.before_calls == 0  ? "appeared"
               : o.after_calls == 0 ? "vanished"
                                    : "changed";
    d.ops.push_back(o);
  }
  std::stable_sort(
      d.ops.begin(), d.ops.end(), [](const OpDelta& a, const OpDelta& b) {
        return std::llabs(a.delta_self_ns()) > std::llabs(b.delta_self_ns());
      });
  for (auto& [name, dev] : devices) {
    dev.device = name;
    d.devices.push_back(dev);
  }
  std::map<std::pair<std::string, std::string>, CommDelta> comms;
  for (const CommGroupStats& c : before.collectives) {
    CommDelta& x = comms[{c.comm_type, c.pg_name}];
    x.before_calls = c.calls;
    x.before_bytes = c.bytes;
    x.before_ns = c.total_ns;
  }
  for (const CommGroupStats& c : after.collectives) {
    CommDelta& x = comms[{c.comm_type, c.pg_name}];
    x.after_calls = c.calls;
    x.after_bytes = c.bytes;
    x.after_ns = c.total_ns;
  }
  for (auto& [key, x] : comms) {
    x.comm_type = key.first;
    x.pg_name = key.second;
    d.collectives.push_back(x);
  }
  return d;
}

std::string FormatDiffText(const TraceDiff& d, int top) {
  std::string out = absl::StrFormat(
      "et-viz diff: %s -> %s (recorded times, profiler included)\n"
      "nodes: %d -> %d; self time %s -> %s (%s, %s)\n",
      d.before, d.after, d.before_nodes, d.after_nodes,
      HumanDuration(d.before_self_ns), HumanDuration(d.after_self_ns),
      SignedDuration(d.after_self_ns - d.before_self_ns),
      Change(d.before_self_ns, d.after_self_ns));
  for (const DeviceDelta& dev : d.devices) {
    absl::StrAppendFormat(
        &out, "  %-4s self time %s -> %s (%s, %s)\n", dev.device,
        HumanDuration(dev.before_self_ns), HumanDuration(dev.after_self_ns),
        SignedDuration(dev.after_self_ns - dev.before_self_ns),
        Change(dev.before_self_ns, dev.after_self_ns));
  }
  int appeared = 0, vanished = 0;
  for (const OpDelta& o : d.ops) {
    appeared += o.change[0] == 'a';
    vanished += o.change[0] == 'v';
  }
  const size_t rows =
      top > 0 ? std::min<size_t>(top, d.ops.size()) : d.ops.size();
  absl::StrAppendFormat(
      &out,
      "\nOps whose self time moved most (%d of %d groups; %d appeared, %d "
      "vanished)\n  %-9s %-10s %-10s %-11s %7s  %-15s %-4s  %s\n",
      rows, d.ops.size(), appeared, vanished, "change", "before", "after",
      "delta", "delta%", "calls", "dev", "name");
  for (size_t k = 0; k < rows; ++k) {
    const OpDelta& o = d.ops[k];
    std::string name = Abbreviate(o.name, 60);
    if (!o.input_shapes.empty())
      absl::StrAppend(&name, " ", Abbreviate(o.input_shapes, 60));
    absl::StrAppendFormat(
        &out, "  %-9s %-10s %-10s %-11s %7s  %-15s %-4s  %s\n", o.change,
        HumanDuration(o.before_self_ns), HumanDuration(o.after_self_ns),
        SignedDuration(o.delta_self_ns()),
        Change(o.before_self_ns, o.after_self_ns),
        absl::StrFormat("%d -> %d", o.before_calls, o.after_calls),
        o.device.substr(0, 4), name);
  }
  if (d.collectives.empty()) {
    absl::StrAppend(&out, "\nCommunication: none in either\n");
    return out;
  }
  absl::StrAppendFormat(&out,
                        "\nCommunication by type and process group\n  %-16s "
                        "%-10s %-15s %-23s %s\n",
                        "type", "pg", "calls", "bytes", "time");
  for (const CommDelta& c : d.collectives) {
    absl::StrAppendFormat(
        &out, "  %-16s %-10s %-15s %-23s %s -> %s (%s)\n", c.comm_type,
        c.pg_name.empty() ? kAllRanksGroupName : c.pg_name,
        absl::StrFormat("%d -> %d", c.before_calls, c.after_calls),
        absl::StrFormat("%s -> %s", HumanBytes(c.before_bytes),
                        HumanBytes(c.after_bytes)),
        HumanDuration(c.before_ns), HumanDuration(c.after_ns),
        SignedDuration(c.after_ns - c.before_ns));
  }
  return out;
}

std::string FormatDiffJson(const TraceDiff& d) {
  nlohmann::json j;
  j["before"] = ValidUtf8(d.before);
  j["after"] = ValidUtf8(d.after);
  j["nodes"] = {d.before_nodes, d.after_nodes};
  j["self_ns"] = {d.before_self_ns, d.after_self_ns};
  j["devices"] = nlohmann::json::array();
  for (const DeviceDelta& dev : d.devices) {
    j["devices"].push_back({{"device", dev.device},
                            {"before_self_ns", dev.before_self_ns},
                            {"after_self_ns", dev.after_self_ns}});
  }
  j["ops"] = nlohmann::json::array();
  for (const OpDelta& o : d.ops) {
    j["ops"].push_back({{"name", ValidUtf8(o.name)},
                        {"device", o.device},
                        {"input_shapes", ValidUtf8(o.input_shapes)},
                        {"change", o.change},
                        {"before_calls", o.before_calls},
                        {"after_calls", o.after_calls},
                        {"before_self_ns", o.before_self_ns},
                        {"after_self_ns", o.after_self_ns},
                        {"delta_self_ns", o.delta_self_ns()},
                        {"before_total_ns", o.before_total_ns},
                        {"after_total_ns", o.after_total_ns}});
  }
  j["collectives"] = nlohmann::json::array();
  for (const CommDelta& c : d.collectives) {
    j["collectives"].push_back({{"comm_type", c.comm_type},
                                {"pg_name", ValidUtf8(c.pg_name)},
                                {"before_calls", c.before_calls},
                                {"after_calls", c.after_calls},
                                {"before_bytes", c.before_bytes},
                                {"after_bytes", c.after_bytes},
                                {"before_ns", c.before_ns},
                                {"after_ns", c.after_ns}});
  }
  return j.dump(1) + "\n";
}

}  // namespace et::viz
