// JSON text helpers for texts the converter copies into its output verbatim
// (IOInfo values/shapes/types, attributes it cannot type). Stateless.
#ifndef CONVERTER_COMMON_JSON_TEXT_H_
#define CONVERTER_COMMON_JSON_TEXT_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace et::convert {

// `json` without the whitespace outside its strings. Linked ("ET+") files are
// written pretty-printed (Chakra's trace linker uses indent=4), so a copied
// list such as `[[1, 2], [3]]` would otherwise reach consumers spread over a
// dozen lines. Text without a line break is returned unchanged: PyTorch's own
// `[1, 2]` spacing is what other tools expect.
std::string CompactJson(absl::string_view json);
// The same into `*out` (replacing its contents), reusing its capacity: the
// emitter writes six such texts per node into a reused message.
void CompactJsonTo(absl::string_view json, std::string* out);

// Top-level string field without its quotes, or "" if absent / not a string.
std::string TopLevelString(const std::map<std::string, std::string>& fields,
                           const std::string& key);

}  // namespace et::convert

#endif  // CONVERTER_COMMON_JSON_TEXT_H_
