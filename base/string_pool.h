// One string interner for every tool: names that repeat across nodes or events
// (op names, kernel names, shapes keys, process-group names) are stored once
// and referred to by dense 32-bit ids; id 0 is the empty string.
#ifndef BASE_STRING_POOL_H_
#define BASE_STRING_POOL_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace et {

// Views returned by Get stay valid for the pool's lifetime, across moves.
// Not thread-safe.
class StringPool {
 public:
  using Id = uint32_t;

  StringPool() { Intern(""); }
  StringPool(const StringPool& other);
  StringPool& operator=(const StringPool& other);
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  // The id of `s`, adding it when new.
  Id Intern(absl::string_view s);
  // The id of `s` when it is in the pool.
  std::optional<Id> Find(absl::string_view s) const;
  absl::string_view Get(Id id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  // deque: element addresses never move, so the index can key on views.
  std::deque<std::string> strings_;
  absl::flat_hash_map<absl::string_view, Id> ids_;
};

}  // namespace et

#endif  // BASE_STRING_POOL_H_
