// ettools.convert's bindings (python/trace_convert.h), part of _ettools: one
// module, since two would each register the Chakra protobuf schema with the
// one shared protobuf library (a second registration aborts). convert
// returns (error, usage, summaries): the error's one line ("" on success),
// whether it is a usage error, and each rank's JSON summary; python/ettools
// raises ettools.Error from them.
#include "python/convert_bindings.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "base/text_escape.h"
#include "python/trace_convert.h"

namespace py = pybind11;

namespace et::python {
namespace {

std::tuple<std::string, bool, std::vector<std::string>> Convert(
    const ConvertCall& call) {
  absl::StatusOr<std::vector<std::string>> summaries;
  {
    py::gil_scoped_release release;
    summaries = ConvertTrace(call);
  }
  if (!summaries.ok()) {
    return {EscapeForPrint(summaries.status().message()),
            absl::IsInvalidArgument(summaries.status()),
            std::vector<std::string>()};
  }
  return {"", false, *summaries};
}

}  // namespace
}  // namespace et::python

namespace et::python {

void AddConvertBindings(py::module_& m) {
  py::class_<ConvertCall>(m, "ConvertCall")
      .def(py::init<>())
      .def_readwrite("input", &ConvertCall::input)
      .def_readwrite("output", &ConvertCall::output)
      .def_readwrite("kineto", &ConvertCall::kineto)
      .def_readwrite("host_profile", &ConvertCall::host_profile)
      .def_readwrite("measured_step_ms", &ConvertCall::measured_step_ms)
      .def_readwrite("keep", &ConvertCall::keep)
      .def_readwrite("force_schema", &ConvertCall::force_schema)
      .def_readwrite("rank", &ConvertCall::rank)
      .def_readwrite("ranks", &ConvertCall::ranks);
  m.def("convert", &Convert, py::arg("call"));
}

}  // namespace et::python
