// String interning; see string_pool.h.
#include "base/string_pool.h"

namespace et {

StringPool::StringPool(const StringPool& other) { *this = other; }

StringPool& StringPool::operator=(const StringPool& other) {
  if (this == &other) return *this;
  // The index keys on views of our own strings: rebuild it, never copy it.
  strings_.clear();
  ids_.clear();
  for (const std::string& s : other.strings_) Intern(s);
  return *this;
}

StringPool::Id StringPool::Intern(absl::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  strings_.emplace_back(s);
  const Id id = static_cast<Id>(strings_.size() - 1);
  ids_.emplace(strings_.back(), id);
  return id;
}

std::optional<StringPool::Id> StringPool::Find(absl::string_view s) const {
  auto it = ids_.find(s);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace et
