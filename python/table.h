// Column tables for Python: named columns of plain C++ vectors (integers,
// floats, booleans, strings as category codes) that the module hands to numpy
// without copying a cell, and pandas assembles into a DataFrame. Built by
// trace_tables and sim_tables; no Python here.
#ifndef PYTHON_TABLE_H_
#define PYTHON_TABLE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace et::python {

// Strings of a column as codes into `categories` (pandas' Categorical).
struct Categorical {
  std::vector<int32_t> codes;
  std::vector<std::string> categories;
};

using ColumnData =
    std::variant<std::vector<int64_t>, std::vector<uint64_t>,
                 std::vector<double>, std::vector<bool>, Categorical>;

struct Column {
  std::string name;
  ColumnData data;
};

// Columns in order; each as long as the others. A deque, so that the column
// Add returned stays where it is while others are added.
struct Table {
  std::deque<Column> columns;
  template <typename T>
  std::vector<T>* Add(const std::string& name) {
    columns.push_back({name, std::vector<T>()});
    return &std::get<std::vector<T>>(columns.back().data);
  }
  Categorical* AddCategorical(const std::string& name) {
    columns.push_back({name, Categorical()});
    return &std::get<Categorical>(columns.back().data);
  }
};

// Appends strings to a Categorical, each distinct string once.
class CategoryWriter {
 public:
  explicit CategoryWriter(Categorical* column) : column_(column) {}
  void Append(absl::string_view value) {
    column_->codes.push_back(Code(value));
  }
  int32_t Code(absl::string_view value);

 private:
  Categorical* column_;
  absl::flat_hash_map<std::string, int32_t> codes_;
};

}  // namespace et::python

#endif  // PYTHON_TABLE_H_
