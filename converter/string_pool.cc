// String interning; see host_op.h.
#include "converter/host_op.h"

namespace et::convert {

StringPool::Id StringPool::Intern(absl::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  strings_.emplace_back(s);
  Id id = static_cast<Id>(strings_.size() - 1);
  ids_.emplace(strings_.back(), id);
  return id;
}

}  // namespace et::convert
