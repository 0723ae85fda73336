// The PyTorch execution-trace schema versions et-convert understands.
#ifndef CONVERTER_ET_SCHEMA_VERSION_H_
#define CONVERTER_ET_SCHEMA_VERSION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace et::convert {

// "1.0.1", "1.0.2-chakra.0.0.4", ..., "1.1.1-chakra.1.0.0".
const std::vector<std::string>& SupportedSchemas();
bool IsSupportedSchema(absl::string_view schema);

}  // namespace et::convert

#endif  // CONVERTER_ET_SCHEMA_VERSION_H_
