// JSON text helpers for texts the converter copies into its output verbatim
// (IOInfo values/shapes/types, attributes it cannot type). Stateless.
#ifndef CONVERTER_JSON_TEXT_H_
#define CONVERTER_JSON_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace et::convert {

// `json` without the whitespace outside its strings. Linked ("ET+") files are
// written pretty-printed (Chakra's trace linker uses indent=4), so a copied
// list such as `[[1, 2], [3]]` would otherwise reach consumers spread over a
// dozen lines. Text without a line break is returned unchanged: PyTorch's own
// `[1, 2]` spacing is what other tools expect.
std::string CompactJson(absl::string_view json);

}  // namespace et::convert

#endif  // CONVERTER_JSON_TEXT_H_
