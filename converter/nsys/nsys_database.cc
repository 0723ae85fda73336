// Guarded access to an nsys SQLite export; see nsys_database.h.
#include "converter/nsys/nsys_database.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/atomic_output_file.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "base/text_escape.h"

namespace et::nsys {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // + NUL: 16 bytes
// The progress handler runs every this many VM instructions.
constexpr int kStepsPerTick = 1000;
// Ticks allowed per statement: a floor for small files, plus one per 16 bytes
// of file (a table scan takes a few instructions per byte; 60x that is room).
constexpr int64_t kMinTicks = 100000;
constexpr int64_t kBytesPerTick = 16;
// SQLite's own heap, process-wide: an export's page cache and statements need
// a few MB; 1 GiB stops a file that makes SQLite allocate without bound.
constexpr int64_t kSqliteHeapBytes = int64_t{1} << 30;

int OnProgress(void* self) {
  int64_t* left = static_cast<int64_t*>(self);
  return --*left < 0 ? 1 : 0;  // non-zero interrupts the statement
}

// Inflates a gzip export to a temp file (SQLite reads files, not streams).
absl::StatusOr<std::string> InflateToTemp(const std::string& path) {
  ASSIGN_OR_RETURN(GzipInput in, GzipInput::Open(path));
  const char* tmpdir = std::getenv("TMPDIR");
  std::string base = path.substr(path.rfind('/') + 1);
  const std::string temp = TempPathFor(absl::StrFormat(
      "%s/et-convert-%s", tmpdir && *tmpdir ? tmpdir : "/tmp", base));
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::UnavailableError(absl::StrFormat(
        "%s: cannot write the inflated copy to %s", path, temp));
  }
  std::vector<char> buffer(1 << 20);
  while (true) {
    absl::StatusOr<size_t> n = in.Read(buffer.data(), buffer.size());
    absl::Status s = n.ok() ? CheckGzipExpansion(path, in.decoded_bytes(),
                                                 in.compressed_bytes())
                            : absl::DataLossError(absl::StrFormat(
                                  "%s: %s", path, n.status().message()));
    if (!s.ok()) {
      DiscardTempFile(temp);
      return s;
    }
    if (*n == 0) break;
    out.write(buffer.data(), static_cast<std::streamsize>(*n));
  }
  out.close();
  if (!out) {
    DiscardTempFile(temp);
    return absl::UnavailableError(
        absl::StrFormat("%s: cannot write %s (disk full?)", path, temp));
  }
  return temp;
}

// Times are kept within +-2^61 ns, as Kineto's (kineto_trace.cc): sums and
// differences of two stay in int64, and the .et reader's 2^62 ns bound holds.
constexpr int64_t kMaxTimeNs = int64_t{1} << 61;

// The table a query reads, for messages: the word after " FROM ".
absl::string_view TableOf(absl::string_view sql) {
  const size_t from = sql.find(" FROM ");
  if (from == absl::string_view::npos) return "the export";
  absl::string_view rest = sql.substr(from + 6);
  return rest.substr(0, rest.find(' '));
}

// Column `c` (of SQLite type `type`) against `rule`.
absl::Status CheckColumn(sqlite3_stmt* stmt, int c, int type,
                         const ColumnRule& rule, const std::string& path,
                         absl::string_view sql, int64_t row) {
  int64_t value = 0;
  if (type == SQLITE_NULL) {
    if (rule.nullable) return absl::OkStatus();
  } else if (rule.text) {
    if (type == SQLITE_TEXT) return absl::OkStatus();
  } else if (type == SQLITE_INTEGER) {
    value = sqlite3_column_int64(stmt, c);
    if (value >= rule.lo && value <= rule.hi) return absl::OkStatus();
    if (rule.time) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s row %d: %s %d ns is beyond +-2^61 ns (73 years)", path,
          TableOf(sql), row, rule.column, value));
    }
  }
  const std::string want =
      rule.text ? std::string("text")
      : rule.hi == INT64_MAX
          ? absl::StrFormat("an integer in [%d, 2^63)", rule.lo)
          : absl::StrFormat("an integer in [%d, %d]", rule.lo, rule.hi);
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s row %d: %s must be %s, got %s", path, TableOf(sql), row,
      rule.column, want, Row(stmt).Describe(c)));
}

// Every text of a row is UTF-8 (names go into JSON and protobuf strings, both
// of which refuse anything else); each column holds what its rule says, or
// without rules, `start`/`end` times are in range. One type lookup per
// column: this runs on every row of every table read.
absl::Status CheckRow(sqlite3_stmt* stmt, const std::string& path,
                      absl::string_view sql, int64_t row,
                      absl::Span<const ColumnRule> rules) {
  const int columns = sqlite3_column_count(stmt);
  for (int c = 0; c < columns; ++c) {
    const int type = sqlite3_column_type(stmt, c);
    if (static_cast<size_t>(c) < rules.size()) {
      RETURN_IF_ERROR(CheckColumn(stmt, c, type, rules[c], path, sql, row));
    }
    const char* name = sqlite3_column_name(stmt, c);
    // A blob is read as text too (Row::Text), so it must be UTF-8 as well.
    if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
      const unsigned char* text = sqlite3_column_text(stmt, c);
      const absl::string_view view(
          reinterpret_cast<const char*>(text),
          static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
      if (text != nullptr && !IsValidUtf8(view)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %s row %d: %s is not valid UTF-8 text: '%s'",
                            path, TableOf(sql), row, name ? name : "?",
                            EscapeForPrint(view.substr(0, 60))));
      }
    } else if (rules.empty() && type == SQLITE_INTEGER && name != nullptr &&
               (std::strcmp(name, "start") == 0 ||
                std::strcmp(name, "end") == 0)) {
      const int64_t t = sqlite3_column_int64(stmt, c);
      if (t > kMaxTimeNs || t < -kMaxTimeNs) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %s row %d: %s %d ns is beyond +-2^61 ns (73 years)", path,
            TableOf(sql), row, name, t));
      }
    }
  }
  return absl::OkStatus();
}

bool IsGzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

bool Row::IsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}
Row::Stored Row::Get(int col, int64_t* value) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_NULL:
      return Stored::kNull;
    case SQLITE_INTEGER:
      *value = sqlite3_column_int64(stmt_, col);
      return Stored::kInteger;
    case SQLITE_TEXT:
      return Stored::kText;
    default:
      return Stored::kOther;
  }
}
std::string Row::Describe(int col) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_NULL:
      return "NULL";
    case SQLITE_INTEGER:
      return absl::StrCat(sqlite3_column_int64(stmt_, col));
    case SQLITE_FLOAT:
      return absl::StrFormat("real %g", sqlite3_column_double(stmt_, col));
    case SQLITE_TEXT:
      return absl::StrCat("text '", EscapeForPrint(Text(col).substr(0, 40)),
                          "'");
    default:
      return "a blob";
  }
}
int64_t Row::Int(int col, int64_t absent) const {
  return IsNull(col) ? absent : sqlite3_column_int64(stmt_, col);
}
absl::string_view Row::Text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return "";
  return absl::string_view(
      reinterpret_cast<const char*>(text),
      static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

absl::StatusOr<bool> IsSqliteFile(const std::string& path) {
  ASSIGN_OR_RETURN(GzipInput in, GzipInput::Open(path));
  char head[16] = {};
  size_t filled = 0;
  while (filled < sizeof(head)) {
    auto n = in.Read(head + filled, sizeof(head) - filled);
    if (!n.ok() || *n == 0) break;  // short or broken: not SQLite
    filled += *n;
  }
  return filled == sizeof(head) &&
         std::memcmp(head, kSqliteMagic, sizeof(kSqliteMagic)) == 0;
}

absl::StatusOr<std::unique_ptr<NsysDatabase>> NsysDatabase::Open(
    const std::string& path, bool force_schema) {
  std::unique_ptr<NsysDatabase> db(new NsysDatabase());
  db->path_ = path;
  std::string file = path;
  if (IsGzip(path)) {
    ASSIGN_OR_RETURN(db->temp_path_, InflateToTemp(path));
    file = db->temp_path_;
  }
  RETURN_IF_ERROR(db->OpenFile(file));
  RETURN_IF_ERROR(db->ReadVersion(force_schema));
  return db;
}

NsysDatabase::~NsysDatabase() {
  sqlite3_close(db_);
  if (!temp_path_.empty()) DiscardTempFile(temp_path_);
}

absl::Status NsysDatabase::Error(absl::string_view what) const {
  const char* why = db_ ? sqlite3_errmsg(db_) : "out of memory";
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s: %s", path_, what, why));
}

absl::Status NsysDatabase::OpenFile(const std::string& file) {
  std::ifstream probe(file, std::ios::binary | std::ios::ate);
  const int64_t bytes = probe ? static_cast<int64_t>(probe.tellg()) : 0;
  char head[16] = {};
  probe.seekg(0);
  probe.read(head, sizeof(head));
  if (probe.gcount() != sizeof(head) ||
      std::memcmp(head, kSqliteMagic, sizeof(kSqliteMagic)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not an SQLite file (no 'SQLite format 3' header)", path_));
  }
  sqlite3_hard_heap_limit64(kSqliteHeapBytes);
  // immutable=1: SQLite takes no locks and opens no journal, so a
  // WAL-flagged export gets no -wal/-shm files created beside it (the input
  // is only read). The path is percent-encoded into the URI.
  std::string uri = "file:";
  for (unsigned char ch : file) {
    if (absl::ascii_isalnum(ch) || ch == '/' || ch == '.' || ch == '-' ||
        ch == '_') {
      uri.push_back(static_cast<char>(ch));
    } else {
      absl::StrAppendFormat(&uri, "%%%02X", ch);
    }
  }
  uri += "?immutable=1";
  if (sqlite3_open_v2(
          uri.c_str(), &db_,
          SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
          nullptr) != SQLITE_OK) {
    return Error("cannot open as SQLite");
  }
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, static_cast<int>(kMaxStringBytes));
  sqlite3_limit(db_, SQLITE_LIMIT_SQL_LENGTH, 1 << 16);
  sqlite3_limit(db_, SQLITE_LIMIT_EXPR_DEPTH, 64);
  sqlite3_limit(db_, SQLITE_LIMIT_COMPOUND_SELECT, 4);
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db_, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
  sqlite3_limit(db_, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 256);
  sqlite3_limit(db_, SQLITE_LIMIT_VARIABLE_NUMBER, 16);
  max_rows_ = std::max<int64_t>(bytes / 16, 1);
  step_budget_ = kMinTicks + bytes / kBytesPerTick;
  sqlite3_progress_handler(db_, kStepsPerTick, OnProgress, &steps_left_);
  return absl::OkStatus();
}

absl::Status NsysDatabase::Query(
    const std::string& sql, int64_t max_rows,
    const std::function<absl::Status(const Row&)>& row,
    absl::Span<const ColumnRule> rules) {
  sqlite3_stmt* stmt = nullptr;
  steps_left_ = step_budget_;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error("not a readable nsys export");
  }
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(stmt,
                                                              sqlite3_finalize);
  int64_t rows = 0;
  while (true) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc == SQLITE_INTERRUPT) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s: a query ran past its budget of %d VM steps for a file this "
          "size (a hostile or damaged export?)",
          path_, step_budget_ * kStepsPerTick));
    }
    if (rc != SQLITE_ROW) return Error("reading the export failed");
    if (++rows > max_rows) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s: a table has more than %d rows, more than a file this size can "
          "hold (a hostile or damaged export?)",
          path_, max_rows));
    }
    RETURN_IF_ERROR(CheckRow(stmt, path_, sql, rows - 1, rules));
    RETURN_IF_ERROR(row(Row(stmt)));
  }
}

absl::StatusOr<bool> NsysDatabase::HasTable(absl::string_view table) {
  std::string type;
  RETURN_IF_ERROR(
      Query(absl::StrFormat("SELECT type FROM sqlite_master WHERE name = '%s'",
                            table),
            16, [&](const Row& r) {
              type = std::string(r.Text(0));
              return absl::OkStatus();
            }));
  if (!type.empty() && type != "table") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s is a %s, not a table: not an nsys export", path_, table, type));
  }
  if (type.empty()) return false;
  // nsys writes plain columns; a generated one runs an expression the file
  // chose on every row read (it once kept SQLite busy without end).
  std::string generated;
  RETURN_IF_ERROR(Query(
      absl::StrFormat("SELECT name FROM pragma_table_xinfo('%s') WHERE hidden "
                      "IN (2, 3)",
                      table),
      1 << 16, [&](const Row& r) {
        if (generated.empty()) generated = std::string(r.Text(0));
        return absl::OkStatus();
      }));
  if (!generated.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s.%s is a generated column, which nsys never writes: not an "
        "nsys export (refused rather than evaluated)",
        path_, table, EscapeForPrint(generated)));
  }
  return true;
}

absl::StatusOr<bool> NsysDatabase::HasColumn(absl::string_view table,
                                             absl::string_view column) {
  bool found = false;
  RETURN_IF_ERROR(Query(
      absl::StrFormat("SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'",
                      table, column),
      16, [&](const Row&) {
        found = true;
        return absl::OkStatus();
      }));
  return found;
}

absl::Status NsysDatabase::ReadVersion(bool force_schema) {
  // nsys 2022 wrote EXPORT_META_DATA; later releases META_DATA_EXPORT.
  std::string table;
  for (const char* t : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    ASSIGN_OR_RETURN(bool has, HasTable(t));
    if (has) {
      table = t;
      break;
    }
  }
  if (table.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: an SQLite file but not an Nsight Systems export (no "
        "META_DATA_EXPORT table)",
        path_));
  }
  RETURN_IF_ERROR(Query(
      absl::StrFormat("SELECT name, value FROM %s WHERE name IN "
                      "('EXPORT_SCHEMA_VERSION', 'EXPORT_PRODUCT_VERSION')",
                      table),
      16, [&](const Row& r) {
        if (r.Text(0) == "EXPORT_PRODUCT_VERSION") {
          version_.nsys_version = std::string(r.Text(1));
        } else {
          version_.text = std::string(r.Text(1));
        }
        return absl::OkStatus();
      }));
  // Three dot-separated numbers of digits only: SimpleAtoi alone would also
  // take "+24" and " 24".
  std::vector<std::string> parts = absl::StrSplit(version_.text, '.');
  const auto digits = [](const std::string& part) {
    return !part.empty() && part.size() <= 6 &&
           std::all_of(part.begin(), part.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (parts.size() != 3 || !std::all_of(parts.begin(), parts.end(), digits) ||
      !absl::SimpleAtoi(parts[0], &version_.major) ||
      !absl::SimpleAtoi(parts[1], &version_.minor) ||
      !absl::SimpleAtoi(parts[2], &version_.micro)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: an nsys export without a readable EXPORT_SCHEMA_VERSION ('%s')",
        path_, version_.text));
  }
  const auto key = [](int major, int minor) { return major * 1000 + minor; };
  const int v = key(version_.major, version_.minor);
  if (!force_schema && (v < key(kOldestMajor, kOldestMinor) ||
                        v > key(kNewestMajor, kNewestMinor))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: nsys export schema %s (nsys %s) is not one et-convert reads "
        "(%d.%d to %d.%d); --force-schema tries anyway",
        path_, version_.text,
        version_.nsys_version.empty() ? "?" : version_.nsys_version,
        kOldestMajor, kOldestMinor, kNewestMajor, kNewestMinor));
  }
  return absl::OkStatus();
}

}  // namespace et::nsys
