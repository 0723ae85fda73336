// ettools.convert: a PyTorch execution trace (with its Kineto trace), a
// Kineto trace alone or an nsys export's graph, one file or a rank pattern,
// to Chakra .et through the converter's own entry points (converter/
// converter.h, converter/multi_rank.h), checked as et-convert checks the
// same options.
#ifndef PYTHON_TRACE_CONVERT_H_
#define PYTHON_TRACE_CONVERT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace et::python {

// et-convert's options that a conversion of traces takes.
struct ConvertCall {
  std::string input, output;     // with %d each when `ranks` > 0
  std::string kineto;            // with %d when `ranks` > 0; "" none
  std::string host_profile;      // a light profile (one input only); "" none
  std::string measured_step_ms;  // "" none
  std::string keep = "simulation";
  bool force_schema = false;
  int64_t rank = -1;
  int64_t ranks = 0;
};

// Converts; returns each rank's summary as et-convert's --json-summary
// writes it. Several ranks (`ranks` > 0, or an nsys export's graphs to an
// output with %d) are written all or none.
absl::StatusOr<std::vector<std::string>> ConvertTrace(const ConvertCall& call);

}  // namespace et::python

#endif  // PYTHON_TRACE_CONVERT_H_
