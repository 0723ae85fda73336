// An Nsight Systems SQLite export opened for reading as untrusted input:
// read-only, no extensions, no untrusted schema functions, SQLite's own size
// limits lowered to base/input_limits.h, and a progress handler that stops any
// statement after a budget of VM steps proportional to the file's size, so a
// hostile file (a view or trigger standing in for a table, a recursive CTE)
// cannot run a query without bound. A gzip export is inflated to a temp file
// first (SQLite needs a file), under the expanded-size and ratio caps of
// base/gzip_input.h. Checks that the file is SQLite, is an nsys export, and
// has a schema version this reader knows.
#ifndef CONVERTER_NSYS_NSYS_DATABASE_H_
#define CONVERTER_NSYS_NSYS_DATABASE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

struct sqlite3;
struct sqlite3_stmt;

namespace et::nsys {

// The export's schema version (META_DATA_EXPORT / EXPORT_META_DATA) and the
// nsys release that wrote it.
struct SchemaVersion {
  int major = 0;
  int minor = 0;
  int micro = 0;
  std::string text;          // "3.25.0"
  std::string nsys_version;  // "2026.2.1.210", "" when absent
};

// The schema versions read here: those of the shared exports (2.9.1 from nsys
// 2022.2, 3.13.2 from 2024.5, 3.24.14 from 2026.1, 3.25.0 from 2026.2) and the
// releases between them, which keep every column read (checked per table).
inline constexpr int kOldestMajor = 2, kOldestMinor = 9;
inline constexpr int kNewestMajor = 3, kNewestMinor = 25;

// True when `path` (plain or gzip) starts with SQLite's file header.
absl::StatusOr<bool> IsSqliteFile(const std::string& path);

// What one selected column must hold: an INTEGER within [lo, hi] (not text, a
// real or a blob, which sqlite3_column_int64 would silently turn into 0 or
// saturate), or TEXT when `text`; NULL only where `nullable`. `time` marks
// `start`/`end` columns (their message names the +-2^61 ns bound). The rules
// of each table read are in nsys_tables.cc.
struct ColumnRule {
  const char* column;
  bool nullable;
  int64_t lo;
  int64_t hi;
  bool text = false;
  bool time = false;
};

// One row of a query, read through typed getters (NULL reads as `absent`).
class Row {
 public:
  explicit Row(sqlite3_stmt* stmt) : stmt_(stmt) {}
  bool IsNull(int col) const;
  // How the column is stored, with one type lookup; `*value` is set for an
  // INTEGER. For checking every column of every row (nsys_tables.cc).
  enum class Stored : uint8_t { kNull, kInteger, kText, kOther };
  Stored Get(int col, int64_t* value) const;
  int64_t Int(int col, int64_t absent = -1) const;
  absl::string_view Text(int col) const;  // "" for NULL
  // The value for a message: "NULL", "text 'soon'", "real 1e+300", "a blob",
  // or the integer.
  std::string Describe(int col) const;

 private:
  sqlite3_stmt* stmt_;
};

class NsysDatabase {
 public:
  // Opens `path` (inflating a gzip export to a temp file, removed on
  // destruction), checks the header, the export metadata and the version.
  // `force_schema` accepts a version outside the known range.
  static absl::StatusOr<std::unique_ptr<NsysDatabase>> Open(
      const std::string& path, bool force_schema);
  ~NsysDatabase();
  NsysDatabase(const NsysDatabase&) = delete;
  NsysDatabase& operator=(const NsysDatabase&) = delete;

  const SchemaVersion& version() const { return version_; }
  const std::string& path() const { return path_; }

  // Whether `table` exists as a real table (a view of that name is an error:
  // nsys writes none, and a view could compute anything).
  absl::StatusOr<bool> HasTable(absl::string_view table);
  // Whether `table` has `column`.
  absl::StatusOr<bool> HasColumn(absl::string_view table,
                                 absl::string_view column);
  // Runs `sql` and calls `row` for each result row; at most `max_rows` rows
  // (an error past that), within the VM-step budget. Every row is checked
  // first: texts are UTF-8, and column i holds what `rules[i]` says (when
  // given; else `start`/`end` columns are within +-2^61 ns).
  absl::Status Query(const std::string& sql, int64_t max_rows,
                     const std::function<absl::Status(const Row&)>& row,
                     absl::Span<const ColumnRule> rules = {});
  // The row cap for one table's query: no table of an export has more rows
  // than the file has 16-byte units (every row takes more than that).
  int64_t max_rows() const { return max_rows_; }

 private:
  NsysDatabase() = default;
  absl::Status OpenFile(const std::string& file);
  absl::Status ReadVersion(bool force_schema);
  absl::Status Error(absl::string_view what) const;

  std::string path_;       // the user's file
  std::string temp_path_;  // the inflated copy of a gzip export, "" none
  sqlite3* db_ = nullptr;
  SchemaVersion version_;
  int64_t max_rows_ = 0;
  int64_t step_budget_ = 0;  // VM steps per statement, in progress-handler
                             // units
  int64_t steps_left_ = 0;
};

}  // namespace et::nsys

#endif  // CONVERTER_NSYS_NSYS_DATABASE_H_
