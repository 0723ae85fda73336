// Category codes for the column tables; see table.h.
#include "python/table.h"

namespace et::python {

int32_t CategoryWriter::Code(absl::string_view value) {
  auto [it, added] = codes_.try_emplace(
      value, static_cast<int32_t>(column_->categories.size()));
  if (added) column_->categories.emplace_back(value);
  return it->second;
}

}  // namespace et::python
