// Turns DOT text into PDF, SVG or PNG by running Graphviz's `dot` program,
// found on PATH at run time. Why the program and not libgvc: et_visualizer then
// links only et_proto, so the project builds where Graphviz's headers are
// absent and only drawing needs Graphviz installed; and Graphviz failures (it
// calls exit() on some errors, and can run for hours on big graphs) stay in a
// child process and come back as a Status. Cost: one fork and the DOT text
// written once to a temporary file, nothing next to the layout itself.
// Stateless; thread-safe (each call uses its own temporary files).
#ifndef VISUALIZER_DOT_RENDERER_H_
#define VISUALIZER_DOT_RENDERER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et::viz {

// The full path of `program` ("dot", or a path with a '/'), searched on PATH; a
// clear error saying how to install Graphviz when it is not found.
absl::StatusOr<std::string> FindProgram(const std::string& program);

// Runs `dot_program -T<format>` on `dot_text` and writes the result to
// `output_path` atomically. `format` is "pdf", "svg" or "png". Where
// Graphviz's spline router fails on an edge, draws again with straight lines
// and sets `*straight_lines` (when given).
absl::Status RenderDot(absl::string_view dot_text, absl::string_view format,
                       const std::string& output_path,
                       const std::string& dot_program = "dot",
                       bool* straight_lines = nullptr);

// What a drawing came out as: its size (the layout's bounding box, from the
// same dot run's `-Tplain`; 0 when dot wrote none) and whether its edges are
// straight lines.
struct Rendered {
  bool straight_lines = false;
  double width_in = 0;
  double height_in = 0;
};

// RenderDot into `tmp_out`, a temporary file (base/atomic_output_file.h) the
// caller commits or discards; errors name `shown_path`, never a temporary.
absl::StatusOr<Rendered> RenderDotToTemp(absl::string_view dot_text,
                                         absl::string_view format,
                                         const std::string& tmp_out,
                                         const std::string& shown_path,
                                         const std::string& dot_program);

// Joins PDF files, in order, into one at `tmp_out` with poppler's `pdfunite`
// (on PATH; NotFound when absent: Graphviz's PDF has one page per graph).
absl::Status JoinPdfPages(const std::vector<std::string>& pages,
                          const std::string& tmp_out,
                          const std::string& shown_path);

}  // namespace et::viz

#endif  // VISUALIZER_DOT_RENDERER_H_
