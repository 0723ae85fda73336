// Reading an nsys export's tables into typed rows; see nsys_tables.h.
#include "converter/nsys/nsys_tables.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/status_macros.h"

namespace et::nsys {
namespace {

// NVTX_EVENTS.eventType of ranges (ENUM_NSYS_EVENT_TYPE, the same from schema
// 2.9 to 3.25): NvtxPushPopRange, NvtxStartEndRange and their NVTXT twins.
constexpr char kNvtxRangeTypes[] = "59, 60, 70, 71";
// CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT.
constexpr int kStreamWaitSync = 2;

// What a valid value of each column read is (ColumnRule, nsys_database.h;
// NsysDatabase::Query checks every row against these before it is read): an
// INTEGER (not text, a real or a blob, which sqlite3_column_int64 would
// silently turn into 0 or saturate) within [lo, hi], NULL only where
// nullable; text columns TEXT; `start`/`end` within +-2^61 ns, and no row
// ends before it starts (CheckSpan). Anything else is refused with one line
// naming the file, the table, the row and the column. The ranges hold every
// shared export (tests/data/nsys): streams up to 2^32-1 (CUPTI's "none" in
// the synchronisation table), devices 0-3, grids up to 187,200.

constexpr int64_t kMaxInt = INT64_MAX;
constexpr int64_t kMaxTimeNs = int64_t{1} << 61;
constexpr ColumnRule Time(const char* column, bool nullable = false) {
  return {column, nullable, -kMaxTimeNs, kMaxTimeNs, false, true};
}
constexpr ColumnRule Id(const char* column, bool nullable = false) {
  return {column, nullable, 0, kMaxInt};
}
constexpr ColumnRule kDevice = {"deviceId", false, 0, (1 << 16) - 1};
constexpr ColumnRule kStream = {"streamId", false, 0, (int64_t{1} << 32) - 1};
// A GPU has under 2^40 bytes; a copy of 2^48 (256 TiB) is a damaged row.
constexpr ColumnRule kBytes = {"bytes", false, 0, int64_t{1} << 48};
// CUDA's bound on a grid's x (2^31 - 1), and so on every grid and block side.
constexpr ColumnRule Dim(const char* column) {
  return {column, true, 0, (int64_t{1} << 31) - 1};
}
constexpr ColumnRule TextColumn(const char* column, bool nullable) {
  return {column, nullable, 0, 0, true};
}

constexpr ColumnRule kKernelRules[] = {Time("start"),
                                       Time("end"),
                                       kDevice,
                                       kStream,
                                       Id("correlationId", true),
                                       Id("globalPid", true),
                                       Id("demangledName"),
                                       Dim("gridX"),
                                       Dim("gridY"),
                                       Dim("gridZ"),
                                       Dim("blockX"),
                                       Dim("blockY"),
                                       Dim("blockZ")};
constexpr ColumnRule kMemcpyRules[] = {Time("start"),
                                       Time("end"),
                                       kDevice,
                                       kStream,
                                       Id("correlationId", true),
                                       Id("globalPid", true),
                                       kBytes,
                                       Id("copyKind", true)};
constexpr ColumnRule kMemsetRules[] = {Time("start"),
                                       Time("end"),
                                       kDevice,
                                       kStream,
                                       Id("correlationId", true),
                                       Id("globalPid", true),
                                       kBytes};
constexpr ColumnRule kRuntimeRules[] = {Time("start"), Time("end"),
                                        Id("globalTid", true),
                                        Id("correlationId"), Id("nameId")};
constexpr ColumnRule kNvtxRules[] = {
    Time("start"),        Time("end", /*nullable=*/true), Id("globalTid", true),
    Id("domainId", true), TextColumn("text", true),       Id("textId", true)};
constexpr ColumnRule kStringRules[] = {Id("id"), TextColumn("value", false)};
constexpr ColumnRule kSyncRules[] = {kDevice,
                                     kStream,
                                     Id("correlationId", true),
                                     Id("globalPid", true),
                                     Id("eventSyncId", true),
                                     Time("start"),
                                     Time("end")};
constexpr ColumnRule kEventRules[] = {
    Id("globalPid", true),
    Id("eventSyncId"),
    {"streamId", true, 0, (int64_t{1} << 32) - 1},
    Id("correlationId", true)};
constexpr ColumnRule kGpuInfoRules[] = {{"id", false, 0, (1 << 16) - 1},
                                        TextColumn("name", true)};

// A row's end (column `end_col`, when not NULL) is not before its start.
absl::Status CheckSpan(const Row& r, int start_col, int end_col,
                       const std::string& path, absl::string_view table,
                       int64_t row) {
  int64_t start = 0, end = 0;
  if (r.Get(end_col, &end) != Row::Stored::kInteger ||
      r.Get(start_col, &start) != Row::Stored::kInteger || end >= start) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s row %d: end %d ns is before start %d ns", path,
                      table, row, end, start));
}

absl::Status MissingId(const std::string& path, absl::string_view table,
                       int64_t row, absl::string_view column) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s row %d has no %s: nothing ties it to a process",
                      path, table, row, column));
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys appends the API
// version a call was introduced in; Kineto and the ET spell the bare name.
absl::string_view StripApiVersion(absl::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == absl::string_view::npos || name.size() - v < 6) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, v);
}

// "aten::mul, seq = 45328, op_id = 990354, sizes = [[8, 8]]" -> "aten::mul":
// PyTorch's emit_nvtx appends the sequence number, op id and shapes to the
// op's name.
absl::string_view OpName(absl::string_view text) {
  for (absl::string_view tag : {", seq = ", ", op_id = ", ", sizes = "}) {
    const size_t at = text.find(tag);
    if (at != absl::string_view::npos) text = text.substr(0, at);
  }
  return text;
}

class TableReader {
 public:
  TableReader(NsysDatabase* db, NsysTables* out) : db_(db), out_(out) {}

  absl::Status ReadStrings() {
    return db_->Query(
        "SELECT id, value FROM StringIds", db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          string_of_id_[r.Int(0)] = out_->strings.Intern(r.Text(1));
          return absl::OkStatus();
        },
        kStringRules);
  }

  absl::Status ReadKernels() {
    constexpr char kTable[] = "CUPTI_ACTIVITY_KIND_KERNEL";
    ASSIGN_OR_RETURN(bool has, db_->HasTable(kTable));
    if (!has) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the export has no %s table: no GPU kernels were captured "
          "(nsys profile --trace=cuda)",
          db_->path(), kTable));
    }
    int64_t row = 0;
    return db_->Query(
        absl::StrCat("SELECT start, end, deviceId, streamId, correlationId, "
                     "globalPid, demangledName, gridX, gridY, gridZ, blockX, "
                     "blockY, blockZ FROM ",
                     kTable),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          RETURN_IF_ERROR(CheckSpan(r, 0, 1, db_->path(), kTable, row));
          GpuActivity a = Activity(GpuKind::kKernel, r);
          if (a.pid < 0)
            return MissingId(db_->path(), kTable, row, "globalPid");
          a.name = Name(r.Int(6, 0));
          for (int k = 0; k < 3; ++k) {
            a.grid[k] = r.Int(7 + k, 1);
            a.block[k] = r.Int(10 + k, 1);
          }
          out_->gpu.push_back(a);
          ++out_->kernel_rows;
          ++row;
          return absl::OkStatus();
        },
        kKernelRules);
  }

  absl::Status ReadMemcpys() {
    constexpr char kTable[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
    ASSIGN_OR_RETURN(bool has, db_->HasTable(kTable));
    if (!has) return absl::OkStatus();
    ASSIGN_OR_RETURN(bool labels, db_->HasTable("ENUM_CUDA_MEMCPY_OPER"));
    absl::flat_hash_map<int64_t, uint32_t> name_of_kind;
    if (labels) {
      RETURN_IF_ERROR(db_->Query("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER",
                                 1024, [&](const Row& r) {
                                   name_of_kind[r.Int(0)] =
                                       out_->strings.Intern(
                                           absl::StrCat("Memcpy ", r.Text(1)));
                                   return absl::OkStatus();
                                 }));
    }
    const uint32_t plain = out_->strings.Intern("Memcpy");
    int64_t row = 0;
    return db_->Query(
        absl::StrCat("SELECT start, end, deviceId, streamId, correlationId, "
                     "globalPid, bytes, copyKind FROM ",
                     kTable),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          RETURN_IF_ERROR(CheckSpan(r, 0, 1, db_->path(), kTable, row));
          GpuActivity a = Activity(GpuKind::kMemcpy, r);
          if (a.pid < 0)
            return MissingId(db_->path(), kTable, row, "globalPid");
          a.bytes = r.Int(6);
          auto it = name_of_kind.find(r.Int(7));
          a.name = it == name_of_kind.end() ? plain : it->second;
          out_->gpu.push_back(a);
          ++row;
          return absl::OkStatus();
        },
        kMemcpyRules);
  }

  absl::Status ReadMemsets() {
    constexpr char kTable[] = "CUPTI_ACTIVITY_KIND_MEMSET";
    ASSIGN_OR_RETURN(bool has, db_->HasTable(kTable));
    if (!has) return absl::OkStatus();
    const uint32_t name = out_->strings.Intern("Memset (Device)");
    int64_t row = 0;
    return db_->Query(
        absl::StrCat("SELECT start, end, deviceId, streamId, correlationId, "
                     "globalPid, bytes FROM ",
                     kTable),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          RETURN_IF_ERROR(CheckSpan(r, 0, 1, db_->path(), kTable, row));
          GpuActivity a = Activity(GpuKind::kMemset, r);
          if (a.pid < 0)
            return MissingId(db_->path(), kTable, row, "globalPid");
          a.bytes = r.Int(6);
          a.name = name;
          out_->gpu.push_back(a);
          ++row;
          return absl::OkStatus();
        },
        kMemsetRules);
  }

  absl::Status ReadRuntime() {
    constexpr char kTable[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
    ASSIGN_OR_RETURN(bool has, db_->HasTable(kTable));
    if (!has) return absl::OkStatus();
    absl::flat_hash_map<int64_t, uint32_t> call_name;  // nameId -> bare name
    int64_t row = 0;
    return db_->Query(
        absl::StrCat("SELECT start, end, globalTid, correlationId, nameId "
                     "FROM ",
                     kTable),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          RETURN_IF_ERROR(CheckSpan(r, 0, 1, db_->path(), kTable, row));
          RuntimeCallRow c;
          c.start_ns = r.Int(0, 0);
          c.end_ns = r.Int(1, c.start_ns);
          if (r.IsNull(2))
            return MissingId(db_->path(), kTable, row, "globalTid");
          c.pid = PidOf(r.Int(2));
          c.tid = TidOf(r.Int(2));
          c.correlation = r.Int(3);
          auto [it, fresh] = call_name.try_emplace(r.Int(4, 0), 0);
          if (fresh) {
            it->second = out_->strings.Intern(
                StripApiVersion(out_->strings.Get(Name(r.Int(4, 0)))));
          }
          c.name = it->second;
          out_->runtime.push_back(c);
          ++row;
          return absl::OkStatus();
        },
        kRuntimeRules);
  }

  absl::Status ReadNvtx() {
    constexpr char kTable[] = "NVTX_EVENTS";
    ASSIGN_OR_RETURN(bool has, db_->HasTable(kTable));
    if (!has) return absl::OkStatus();
    int64_t row = 0;
    return db_->Query(
        absl::StrCat("SELECT start, end, globalTid, domainId, text, textId "
                     "FROM ",
                     kTable, " WHERE eventType IN (", kNvtxRangeTypes, ")"),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          RETURN_IF_ERROR(CheckSpan(r, 0, 1, db_->path(), kTable, row));
          ++row;
          if (r.IsNull(1)) {
            ++out_->open_nvtx_ranges;
            return absl::OkStatus();
          }
          NvtxRange n;
          n.start_ns = r.Int(0, 0);
          n.end_ns = r.Int(1);
          if (r.IsNull(2))
            return MissingId(db_->path(), kTable, row - 1, "globalTid");
          n.pid = PidOf(r.Int(2));
          n.tid = TidOf(r.Int(2));
          n.domain = r.Int(3, 0);
          const absl::string_view text =
              r.IsNull(4) ? out_->strings.Get(Name(r.Int(5, 0))) : r.Text(4);
          n.name = out_->strings.Intern(OpName(text));
          out_->nvtx.push_back(n);
          return absl::OkStatus();
        },
        kNvtxRules);
  }

  // Stream waits, where the export links a wait to its event record
  // (eventSyncId, schema 3.2x).
  absl::Status ReadWaits() {
    constexpr char kSync[] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    constexpr char kEvent[] = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
    for (const char* t : {kSync, kEvent}) {
      ASSIGN_OR_RETURN(bool has, db_->HasTable(t));
      if (!has) return absl::OkStatus();
      ASSIGN_OR_RETURN(bool linked, db_->HasColumn(t, "eventSyncId"));
      if (!linked) return absl::OkStatus();
    }
    struct Record {
      int64_t stream, correlation;
    };
    absl::flat_hash_map<std::pair<int64_t, int64_t>, Record> records;
    RETURN_IF_ERROR(db_->Query(
        absl::StrCat("SELECT globalPid, eventSyncId, streamId, correlationId "
                     "FROM ",
                     kEvent, " WHERE eventSyncId IS NOT NULL"),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          records[{r.Int(0), r.Int(1)}] = {r.Int(2), r.Int(3)};
          return absl::OkStatus();
        },
        kEventRules));
    int64_t row = 0;
    return db_->Query(
        absl::StrFormat("SELECT deviceId, streamId, correlationId, globalPid, "
                        "eventSyncId, start, end FROM %s WHERE syncType = %d",
                        kSync, kStreamWaitSync),
        db_->max_rows(),
        [&](const Row& r) -> absl::Status {
          RETURN_IF_ERROR(CheckSpan(r, 5, 6, db_->path(), kSync, row++));
          auto it = records.find({r.Int(3), r.Int(4)});
          if (it == records.end() || r.IsNull(3)) return absl::OkStatus();
          StreamWait w;
          w.start_ns = r.Int(5, 0);
          w.end_ns = r.Int(6, w.start_ns);
          w.device = r.Int(0);
          w.stream = r.Int(1);
          w.correlation = r.Int(2);
          w.pid = PidOf(r.Int(3));
          w.record_stream = it->second.stream;
          w.record_correlation = it->second.correlation;
          out_->waits.push_back(w);
          return absl::OkStatus();
        },
        kSyncRules);
  }

  absl::Status ReadGpuNames() {
    ASSIGN_OR_RETURN(bool has, db_->HasTable("TARGET_INFO_GPU"));
    if (!has) return absl::OkStatus();
    return db_->Query(
        "SELECT id, name FROM TARGET_INFO_GPU", 4096,
        [&](const Row& r) -> absl::Status {
          out_->gpu_names.emplace_back(r.Int(0), std::string(r.Text(1)));
          return absl::OkStatus();
        },
        kGpuInfoRules);
  }

 private:
  uint32_t Name(int64_t string_id) const {
    auto it = string_of_id_.find(string_id);
    return it == string_of_id_.end() ? 0 : it->second;
  }

  static GpuActivity Activity(GpuKind kind, const Row& r) {
    GpuActivity a;
    a.kind = kind;
    a.start_ns = r.Int(0, 0);
    a.end_ns = std::max(r.Int(1, a.start_ns), a.start_ns);
    a.device = r.Int(2);
    a.stream = r.Int(3);
    a.correlation = r.Int(4);
    a.pid = r.IsNull(5) ? -1 : PidOf(r.Int(5));
    return a;
  }

  NsysDatabase* db_;
  NsysTables* out_;
  absl::flat_hash_map<int64_t, uint32_t> string_of_id_;
};

}  // namespace

absl::StatusOr<NsysTables> ReadNsysTables(NsysDatabase* db) {
  NsysTables tables;
  tables.version = db->version();
  TableReader reader(db, &tables);
  ASSIGN_OR_RETURN(bool has_strings, db->HasTable("StringIds"));
  if (!has_strings) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: an nsys export without a StringIds table", db->path()));
  }
  RETURN_IF_ERROR(reader.ReadStrings());
  RETURN_IF_ERROR(reader.ReadKernels());
  RETURN_IF_ERROR(reader.ReadMemcpys());
  RETURN_IF_ERROR(reader.ReadMemsets());
  RETURN_IF_ERROR(reader.ReadRuntime());
  RETURN_IF_ERROR(reader.ReadNvtx());
  RETURN_IF_ERROR(reader.ReadWaits());
  RETURN_IF_ERROR(reader.ReadGpuNames());
  return tables;
}

}  // namespace et::nsys
