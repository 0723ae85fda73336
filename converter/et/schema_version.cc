// Supported ET schema versions; see schema_version.h.
#include "converter/et/schema_version.h"

#include <algorithm>

namespace et::convert {

const std::vector<std::string>& SupportedSchemas() {
  static const auto* kSchemas = new std::vector<std::string>{
      "1.0.1",
      "1.0.2-chakra.0.0.4",
      "1.0.3-chakra.0.0.4",
      "1.0.4-chakra.0.0.4",
      "1.1.0-chakra.0.0.4",
      "1.1.1-chakra.0.0.4",
      "1.1.1-chakra.1.0.0",
  };
  return *kSchemas;
}

bool IsSupportedSchema(absl::string_view schema) {
  const auto& all = SupportedSchemas();
  return std::find(all.begin(), all.end(), schema) != all.end();
}

}  // namespace et::convert
