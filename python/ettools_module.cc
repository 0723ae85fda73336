// _ettools: the C++ half of the Python module ettools (python/ettools/):
// loads traces into column tables and runs et-sim's own command
// (simulator/et_sim_command.h) from keyword options, with the GIL released
// while C++ works. Tables go to Python as numpy arrays that own the C++
// vectors (no copy per cell); an absl::Status becomes ettools.Error, or
// ettools.UsageError for a mistake in the options (et-sim's exit status 2),
// carrying the tool's one line. Conversion's bindings are in
// convert_bindings.cc.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/text_escape.h"
#include "cli/flag_use.h"
#include "python/convert_bindings.h"
#include "python/sim_tables.h"
#include "python/table.h"
#include "python/trace_tables.h"
#include "simulator/et_sim_command.h"
#include "simulator/report/search_report.h"

namespace py = pybind11;

namespace et::python {
namespace {

// Thrown inside this file only; pybind11 raises them as the Python
// exceptions registered below.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ToolUsageError : ToolError {
  using ToolError::ToolError;
};

void RaiseIfError(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message = EscapeForPrint(status.message());
  if (absl::IsInvalidArgument(status)) throw ToolUsageError(message);
  throw ToolError(message);
}

// A vector handed to numpy: the array owns it.
template <typename T>
py::array Own(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free(owned,
                   [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(),
                        free);
}

py::array OwnBools(const std::vector<bool>& values) {
  py::array_t<bool> out(static_cast<py::ssize_t>(values.size()));
  bool* data = out.mutable_data();
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return out;
}

// {name: array, or (codes, categories) for a categorical}, in column order.
py::dict ToPython(Table table) {
  py::dict out;
  for (Column& column : table.columns) {
    py::object value;
    if (auto* c = std::get_if<Categorical>(&column.data)) {
      value = py::make_tuple(Own(std::move(c->codes)), c->categories);
    } else if (auto* b = std::get_if<std::vector<bool>>(&column.data)) {
      value = OwnBools(*b);
    } else {
      std::visit(
          [&](auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (!std::is_same_v<V, Categorical> &&
                          !std::is_same_v<V, std::vector<bool>>)
              value = Own(std::move(v));
          },
          column.data);
    }
    out[py::str(column.name)] = value;
  }
  return out;
}

// A loaded trace: its tables built on demand.
class TraceData {
 public:
  explicit TraceData(LoadedTrace trace) : trace_(std::move(trace)) {}
  py::dict Nodes() const { return Build(NodesTable); }
  py::dict Deps() const { return Build(DepsTable); }
  py::dict Groups() const { return Build(GroupsTable); }
  std::string Metadata() const { return MetadataJson(trace_); }
  const std::vector<std::string>& files() const { return trace_.files; }
  const std::vector<int64_t>& ranks() const { return trace_.ranks; }

 private:
  py::dict Build(Table (*make)(const LoadedTrace&)) const {
    Table table;
    {
      py::gil_scoped_release release;
      table = make(trace_);
    }
    return ToPython(std::move(table));
  }
  LoadedTrace trace_;
};

std::unique_ptr<TraceData> Load(const std::string& path, int64_t ranks) {
  absl::StatusOr<LoadedTrace> trace;
  {
    py::gil_scoped_release release;
    trace = LoadTrace(path, ranks);
  }
  RaiseIfError(trace.status());
  return std::make_unique<TraceData>(std::move(*trace));
}

// ---- et-sim options from keywords ----------------------------------------

std::string Spelled(const std::string& name) {
  return "--" + absl::StrReplaceAll(name, {{"_", "-"}});
}

[[noreturn]] void BadValue(const std::string& name, const char* expected,
                           py::handle value) {
  throw ToolUsageError(Spelled(name) + ": expected " + expected + ", got " +
                       std::string(py::repr(value)));
}

int64_t IntOf(const std::string& name, py::handle v) {
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
    BadValue(name, "an integer", v);
  return v.cast<int64_t>();
}
double DoubleOf(const std::string& name, py::handle v) {
  if (py::isinstance<py::bool_>(v) ||
      !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
    BadValue(name, "a number", v);
  return v.cast<double>();
}
// Text flags take a str, or a number written as Python writes it.
std::string TextOf(const std::string& name, py::handle v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::bool_>(v) ||
      !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
    BadValue(name, "text", v);
  return std::string(py::str(v));
}
bool BoolOf(const std::string& name, py::handle v) {
  if (!py::isinstance<py::bool_>(v)) BadValue(name, "True or False", v);
  return v.cast<bool>();
}
// A list flag: a list of str, or one str split at commas as Abseil does.
std::vector<std::string> ListOf(const std::string& name, py::handle v) {
  if (py::isinstance<py::str>(v))
    return absl::StrSplit(v.cast<std::string>(), ',');
  if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v))
    BadValue(name, "a list of text", v);
  std::vector<std::string> out;
  for (py::handle item : v) out.push_back(TextOf(name, item));
  return out;
}

using Setter =
    std::function<void(sim::EtSimFlags*, const std::string&, py::handle)>;

Setter Int(std::optional<int64_t> sim::EtSimFlags::*field) {
  return [field](sim::EtSimFlags* f, const std::string& n, py::handle v) {
    f->*field = IntOf(n, v);
  };
}
Setter Int(int64_t sim::EtSimFlags::*field) {
  return [field](sim::EtSimFlags* f, const std::string& n, py::handle v) {
    f->*field = IntOf(n, v);
  };
}
Setter Double(double sim::EtSimFlags::*field) {
  return [field](sim::EtSimFlags* f, const std::string& n, py::handle v) {
    f->*field = DoubleOf(n, v);
  };
}
Setter Text(std::string sim::EtSimFlags::*field) {
  return [field](sim::EtSimFlags* f, const std::string& n, py::handle v) {
    f->*field = TextOf(n, v);
  };
}
Setter Bool(bool sim::EtSimFlags::*field) {
  return [field](sim::EtSimFlags* f, const std::string& n, py::handle v) {
    f->*field = BoolOf(n, v);
  };
}
Setter List(std::vector<std::string> sim::EtSimFlags::*field) {
  return [field](sim::EtSimFlags* f, const std::string& n, py::handle v) {
    f->*field = ListOf(n, v);
  };
}

// Every et-sim flag, by its declared name (et_sim_main.cc).
const std::vector<std::pair<std::string, Setter>>& EtSimOptions() {
  using F = sim::EtSimFlags;
  static const auto* options = new std::vector<std::pair<std::string, Setter>>{
      {"world", Int(&F::world)},
      {"ranks", Int(&F::ranks)},
      {"schedule", Text(&F::schedule)},
      {"compute", Text(&F::compute)},
      {"host_time", Text(&F::host_time)},
      {"host_profile", Text(&F::host_profile)},
      {"host_speed", Double(&F::host_speed)},
      {"measured_step_ms", Text(&F::measured_step_ms)},
      {"calibration", Text(&F::calibration)},
      {"device", Text(&F::device)},
      {"device_file", Text(&F::device_file)},
      {"compute_scale", Double(&F::compute_scale)},
      {"slow_rank", List(&F::slow_rank)},
      {"comm", Text(&F::comm)},
      {"algorithm", Text(&F::algorithm)},
      {"nccl_efficiency", Bool(&F::nccl_efficiency)},
      {"topology", Text(&F::topology)},
      {"astra_system", Text(&F::astra_system)},
      {"groups", Text(&F::groups)},
      {"layout", Text(&F::layout)},
      {"recorded_layout", Text(&F::recorded_layout)},
      {"sweep", Text(&F::sweep)},
      {"search", Text(&F::search)},
      {"chart", Text(&F::chart)},
      {"dp_sync", Text(&F::dp_sync)},
      {"bucket_mb", Double(&F::bucket_mb)},
      {"micro_batches", Int(&F::micro_batches)},
      {"pp_schedule", Text(&F::pp_schedule)},
      {"pp_split", Text(&F::pp_split)},
      {"sequence_parallel", Bool(&F::sequence_parallel)},
      {"device_memory_gib", Double(&F::device_memory_gib)},
      {"no_memory", Bool(&F::no_memory)},
      {"no_symmetry", Bool(&F::no_symmetry)},
      {"json", Bool(&F::json)},
      {"timeline", Text(&F::timeline)},
      {"html", Text(&F::html)},
      {"compare", Text(&F::compare)},
      {"top", Int(&F::top)},
      {"write_ranks", Text(&F::write_ranks)},
      {"nccl_tests", Text(&F::nccl_tests)},
      {"min_bytes", Text(&F::min_bytes)},
      {"max_bytes", Text(&F::max_bytes)},
      {"comm_from", List(&F::comm_from)},
      {"nodes", Int(&F::nodes)},
      {"gpus_per_node", Int(&F::gpus_per_node)},
      {"nccl_algo", Text(&F::nccl_algo)},
      {"nccl_proto", Text(&F::nccl_proto)},
      {"nccl_min_channels", Int(&F::nccl_min_channels)},
      {"nccl_max_channels", Int(&F::nccl_max_channels)},
      {"gpus_per_process", Int(&F::gpus_per_process)},
  };
  return *options;
}

std::vector<std::string> OptionNames() {
  std::vector<std::string> names;
  for (const auto& [name, setter] : EtSimOptions()) names.push_back(name);
  return names;
}

// The flags as et_sim_main.cc reads and refuses them: unknown ones, empty
// values, and flags given without what uses them. None means not given.
sim::EtSimFlags FlagsOf(const std::vector<std::string>& positional,
                        const py::dict& options) {
  sim::EtSimFlags flags;
  flags.positional = positional;
  std::set<std::string> given;
  for (auto [key, value] : options) {
    const std::string name = key.cast<std::string>();
    if (value.is_none()) continue;
    const Setter* setter = nullptr;
    for (const auto& [option, set] : EtSimOptions())
      if (option == name) setter = &set;
    if (setter == nullptr)
      throw ToolUsageError("unknown option '" + name + "' (et-sim has no " +
                           Spelled(name) + ")");
    (*setter)(&flags, name, value);
    given.insert(name);
    for (const char* flag : sim::kEtSimNonEmptyFlags) {
      if (Spelled(name) == std::string("--") + flag &&
          py::isinstance<py::str>(value) && value.cast<std::string>().empty())
        throw ToolUsageError(Spelled(name) + " was given an empty value");
    }
  }
  std::vector<FlagUse> uses;
  for (const sim::EtSimFlagUse& use : sim::EtSimFlagUses(flags))
    uses.push_back({use.flag, use.used, use.needs});
  const std::string mistake = UnusedFlagMistake(given, uses);
  if (!mistake.empty()) throw ToolUsageError(mistake);
  return flags;
}

// One et-sim run: its notes, what it printed (a sweep's or the nccl-tests
// table's --json), or a trace run's report, formatted only when asked.
class SimRun {
 public:
  std::string printed;  // exactly what et-sim --json printed
  std::vector<std::string> notes;
  sim::EtSimOutput output;
  int64_t top = 15;

  // et-sim --json's text: a trace run's report formatted as et-sim formats
  // it (once; the critical path makes it tens of MB on a large graph).
  const std::string& Json() {
    if (output.report && printed.empty()) {
      py::gil_scoped_release release;
      printed = sim::FormatReportJson(*output.report) + "\n";
    }
    return printed;
  }
  // The report without its long tables (which Table() gives as columns).
  std::string SummaryJson() {
    if (!output.report) return Json();
    py::gil_scoped_release release;
    return sim::FormatReportSummaryJson(*output.report);
  }
  // "ops", "collectives" or "critical_path" as columns; None without a
  // report.
  py::object ReportTable(const std::string& name) const {
    if (!output.report) return py::none();
    Table (*make)(const sim::Report&) = nullptr;
    if (name == "ops") make = OpsTable;
    if (name == "collectives") make = CollectivesTable;
    if (name == "critical_path") make = CriticalPathTable;
    if (make == nullptr) throw ToolError("no report table '" + name + "'");
    Table table;
    {
      py::gil_scoped_release release;
      table = make(*output.report);
    }
    return ToPython(std::move(table));
  }
  std::string Text() const {
    if (output.report) return sim::FormatReportText(*output.report, top);
    if (output.sweep && output.sweep->search_world > 0)
      return sim::FormatSearchText(*output.sweep);
    if (output.sweep) return sim::FormatSweepText(*output.sweep);
    return "";
  }
  // A table of the kept simulation (TimelineTable, MemoryTimelineTable);
  // None without one.
  py::object SimulationTable(Table (*make)(const sim::Simulation&)) const {
    if (!output.simulation) return py::none();
    Table table;
    {
      py::gil_scoped_release release;
      table = make(*output.simulation);
    }
    return ToPython(std::move(table));
  }
  py::object Timeline() const { return SimulationTable(TimelineTable); }
  py::object MemoryTimeline() const {
    return SimulationTable(MemoryTimelineTable);
  }
};

std::unique_ptr<SimRun> Simulate(const std::vector<std::string>& positional,
                                 const py::dict& options) {
  sim::EtSimFlags flags = FlagsOf(positional, options);
  auto run = std::make_unique<SimRun>();
  run->top = flags.top;
  flags.json = true;  // the text is rebuilt from the report on demand
  run->output.keep_simulation = true;
  run->output.print_report = false;  // formatted when asked (Json())
  run->output.print_out = [r = run.get()](const std::string& t) {
    r->printed += t;
  };
  run->output.print_err = [r = run.get()](const std::string& line) {
    r->notes.push_back(line);
  };
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = sim::RunEtSim(flags, &run->output);
  }
  RaiseIfError(status);
  return run;
}

}  // namespace
}  // namespace et::python

PYBIND11_MODULE(_ettools, m) {
  using namespace et::python;
  m.doc() = "C++ core of ettools: trace tables and et-sim runs";
  static py::exception<ToolError> error(m, "Error");
  static py::exception<ToolUsageError> usage_error(m, "UsageError",
                                                   error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ToolUsageError& e) {
      usage_error(e.what());
    } catch (const ToolError& e) {
      error(e.what());
    }
  });

  py::class_<TraceData>(m, "TraceData")
      .def("nodes", &TraceData::Nodes)
      .def("deps", &TraceData::Deps)
      .def("groups", &TraceData::Groups)
      .def("metadata", &TraceData::Metadata)
      .def_property_readonly("files", &TraceData::files)
      .def_property_readonly("ranks", &TraceData::ranks);
  m.def("load", &Load, py::arg("path"), py::arg("ranks") = 0);

  py::class_<SimRun>(m, "SimRun")
      .def("json", &SimRun::Json)
      .def("summary_json", &SimRun::SummaryJson)
      .def("report_table", &SimRun::ReportTable)
      .def_readonly("notes", &SimRun::notes)
      .def("text", &SimRun::Text)
      .def("timeline", &SimRun::Timeline)
      .def("memory_timeline", &SimRun::MemoryTimeline);
  m.def("simulate", &Simulate, py::arg("positional"), py::arg("options"));
  m.def("option_names", &OptionNames);
  AddConvertBindings(m);
}
