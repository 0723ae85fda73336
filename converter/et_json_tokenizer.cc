// Chunked structural scan of an ET JSON file; see et_json_tokenizer.h.
#include "converter/et_json_tokenizer.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "proto/file_util.h"
#include "proto/input_limits.h"
#include "proto/status_macros.h"

namespace et::convert {
namespace {

constexpr size_t kChunkBytes =
    1 << 20;  // 1 MiB: refills stay rare, memory stays small
constexpr size_t kMaxFieldBytes =
    1 << 20;  // top-level fields kept only when small

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Result of scanning one JSON value: its end offset, or "need more input", or
// malformed.
enum class Scan { kDone, kNeedMore, kBad, kTooDeep };

// Byte classes for the structural scan; everything else is kPlain.
enum : uint8_t { kPlain = 0, kQuote, kOpen, kClose };
struct ByteClasses {
  uint8_t of[256] = {};
  constexpr ByteClasses() {
    of[static_cast<uint8_t>('"')] = kQuote;
    of[static_cast<uint8_t>('{')] = kOpen;
    of[static_cast<uint8_t>('[')] = kOpen;
    of[static_cast<uint8_t>('}')] = kClose;
    of[static_cast<uint8_t>(']')] = kClose;
  }
};
constexpr ByteClasses kClasses;

// Scans past a string starting at `p` (which is '"'). Sets *end past the
// closing quote. Jumps between quotes with memchr; a quote preceded by an odd
// run of backslashes is escaped and skipped.
Scan ScanString(const char* buf, size_t p, size_t n, size_t* end) {
  size_t i = p + 1;
  while (i < n) {
    const void* q = memchr(buf + i, '"', n - i);
    if (q == nullptr) return Scan::kNeedMore;
    size_t pos = static_cast<size_t>(static_cast<const char*>(q) - buf);
    size_t backslashes = 0;
    while (pos - backslashes > p + 1 && buf[pos - backslashes - 1] == '\\')
      ++backslashes;
    if (backslashes % 2 == 0) {
      *end = pos + 1;
      return Scan::kDone;
    }
    i = pos + 1;
  }
  return Scan::kNeedMore;
}

// Scans past one JSON value starting at `p` (no leading whitespace). Brackets
// are matched and strings skipped; scalars end at the next structural
// character.
Scan ScanValue(const char* buf, size_t p, size_t n, size_t* end) {
  const char c0 = buf[p];
  if (c0 == '"') return ScanString(buf, p, n, end);
  if (c0 == '{' || c0 == '[') {
    // 64-bit: a buffer of 2^31 '[' overflowed an int (undefined behaviour).
    int64_t depth = 0;
    for (size_t i = p; i < n; ++i) {
      switch (kClasses.of[static_cast<uint8_t>(buf[i])]) {
        case kPlain:
          break;
        case kQuote: {
          size_t s_end;
          if (ScanString(buf, i, n, &s_end) == Scan::kNeedMore)
            return Scan::kNeedMore;
          i = s_end - 1;
          break;
        }
        case kOpen:
          // Nothing real nests this deep; later stages walk values, and a
          // bound here keeps every one of them shallow.
          if (++depth > kMaxNestingDepth) return Scan::kTooDeep;
          break;
        case kClose:
          if (--depth == 0) {
            *end = i + 1;
            return Scan::kDone;
          }
          if (depth < 0) return Scan::kBad;
          break;
      }
    }
    return Scan::kNeedMore;
  }
  if (c0 == '}' || c0 == ']' || c0 == ',' || c0 == ':') return Scan::kBad;
  for (size_t i = p; i < n; ++i) {
    const char c = buf[i];
    if (c == ',' || c == '}' || c == ']' || IsSpace(c)) {
      *end = i;
      return Scan::kDone;
    }
  }
  return Scan::kNeedMore;
}

}  // namespace

size_t JsonValueLength(absl::string_view text) {
  size_t end = 0;
  if (text.empty() ||
      ScanValue(text.data(), 0, text.size(), &end) != Scan::kDone) {
    return absl::string_view::npos;
  }
  return end;
}

std::string TopLevelString(const std::map<std::string, std::string>& fields,
                           const std::string& key) {
  auto it = fields.find(key);
  if (it == fields.end() || it->second.size() < 2 || it->second.front() != '"')
    return "";
  return it->second.substr(1, it->second.size() - 2);
}

absl::Status EtJsonTokenizer::Run(const NodeCallback& on_node,
                                  const ProgressCallback& on_progress,
                                  TraceTextSource* text) {
  if (IsDirectory(path_)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory", path_));
  }
  gzFile file = gzopen(path_.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open: %s", path_, strerror(errno)));
  }
  gzbuffer(file, 1 << 18);
  struct Closer {
    gzFile f;
    ~Closer() { gzclose(f); }
  } closer{file};

  std::vector<char> buf(kChunkBytes + kSpanPadding);
  size_t begin = 0, n = 0;  // unconsumed bytes are buf[begin, n)
  bool eof = false;
  int64_t consumed_before = 0;  // decoded bytes dropped from the front of buf
  bool text_opened = false;

  // Moves the unconsumed tail to the front and appends a chunk; grows for huge
  // values.
  auto refill = [&]() -> absl::Status {
    if (begin > 0) {
      memmove(buf.data(), buf.data() + begin, n - begin);
      consumed_before += static_cast<int64_t>(begin);
      n -= begin;
      begin = 0;
    }
    if (buf.size() - kSpanPadding - n < kChunkBytes / 2) {
      // Only one value (a node, or a top-level field) is ever held whole; a
      // gzip of '[' or of one endless string otherwise grew to gigabytes.
      if (n > kMaxNodeBytes) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "%s: one JSON value starting at byte %d (after node #%d) is over "
            "%d MiB, the limit on one node",
            path_, consumed_before, nodes_seen_, kMaxNodeBytes >> 20));
      }
      buf.resize(buf.size() * 2);
    }
    int got = gzread(file, buf.data() + n,
                     static_cast<unsigned>(buf.size() - kSpanPadding - n));
    int errnum = Z_OK;
    const char* msg = gzerror(file, &errnum);
    if (got < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR)) {
      // zlib's message starts with the path given to gzopen: drop it.
      absl::string_view detail = msg;
      absl::ConsumePrefix(&detail, path_ + ": ");
      return absl::DataLossError(
          absl::StrFormat("%s: corrupt gzip stream near byte %d: %s", path_,
                          consumed_before + n, detail));
    }
    // zlib reports a stream cut before its trailer (CRC and length) as
    // Z_BUF_ERROR with a clean-looking end; the data may be silently short.
    if (got == 0 && errnum == Z_BUF_ERROR) {
      return absl::DataLossError(absl::StrFormat(
          "%s: truncated gzip stream (ends before its trailer) at byte %d",
          path_, consumed_before + n));
    }
    if (got == 0) eof = true;
    RETURN_IF_ERROR(CheckGzipExpansion(
        path_, static_cast<uint64_t>(consumed_before) + n + (got > 0 ? got : 0),
        static_cast<uint64_t>(gzoffset(file))));
    if (text != nullptr && got > 0) {
      if (!text_opened) {
        text_opened = true;
        RETURN_IF_ERROR(gzdirect(file) ? text->OpenPlain(path_)
                                       : text->OpenSpill(path_));
      }
      if (text->spilling()) {
        RETURN_IF_ERROR(text->Append(
            absl::string_view(buf.data() + n, static_cast<size_t>(got))));
      }
    }
    n += static_cast<size_t>(got);
    memset(buf.data() + n, ' ', kSpanPadding);
    if (on_progress) on_progress(gzoffset(file));
    return absl::OkStatus();
  };
  auto where = [&](size_t p) {
    return consumed_before + static_cast<int64_t>(p);
  };
  auto malformed = [&](size_t p, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: invalid JSON at byte %d (after node #%d): %s",
                        path_, where(p), nodes_seen_, what));
  };
  // Skips whitespace, refilling as needed; false at end of input.
  auto skip_space = [&]() -> absl::StatusOr<bool> {
    while (true) {
      while (begin < n && IsSpace(buf[begin])) ++begin;
      if (begin < n) return true;
      if (eof) return false;
      RETURN_IF_ERROR(refill());
    }
  };
  // Scans one value at `begin`, refilling until it is complete.
  auto scan_value = [&](size_t* end) -> absl::Status {
    while (true) {
      Scan s = ScanValue(buf.data(), begin, n, end);
      if (s == Scan::kDone) return absl::OkStatus();
      if (s == Scan::kBad) return malformed(begin, "unexpected character");
      if (s == Scan::kTooDeep) {
        return malformed(begin, absl::StrFormat("nested deeper than %d levels",
                                                kMaxNestingDepth));
      }
      if (eof) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: truncated JSON: input ends inside a value at "
                            "byte %d (after node #%d)",
                            path_, where(n), nodes_seen_));
      }
      RETURN_IF_ERROR(refill());
    }
  };
  auto expect_more = [&](absl::string_view what) -> absl::Status {
    ASSIGN_OR_RETURN(bool more, skip_space());
    if (!more) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: truncated JSON: input ends where %s was "
                          "expected (after node #%d)",
                          path_, what, nodes_seen_));
    }
    return absl::OkStatus();
  };

  RETURN_IF_ERROR(refill());
  ASSIGN_OR_RETURN(bool any, skip_space());
  if (!any)
    return absl::InvalidArgumentError(absl::StrFormat("%s: empty file", path_));
  if (buf[begin] != '{')
    return malformed(begin, "the trace is not a JSON object");
  ++begin;
  bool saw_nodes = false;
  while (true) {
    RETURN_IF_ERROR(expect_more("a field name"));
    if (buf[begin] == '}') break;
    if (buf[begin] != '"') return malformed(begin, "expected a field name");
    size_t key_end;
    RETURN_IF_ERROR(scan_value(&key_end));
    std::string key(buf.data() + begin + 1, key_end - begin - 2);
    begin = key_end;
    RETURN_IF_ERROR(expect_more("':'"));
    if (buf[begin] != ':') return malformed(begin, "expected ':'");
    ++begin;
    RETURN_IF_ERROR(expect_more("a value"));
    if (key == "nodes") {
      if (buf[begin] != '[') return malformed(begin, "`nodes` is not an array");
      saw_nodes = true;
      ++begin;
      while (true) {
        RETURN_IF_ERROR(expect_more("a node or ']'"));
        if (buf[begin] == ']') {
          ++begin;
          break;
        }
        if (buf[begin] != '{')
          return malformed(begin, "a node is not a JSON object");
        size_t end;
        RETURN_IF_ERROR(scan_value(&end));
        RETURN_IF_ERROR(
            on_node(absl::string_view(buf.data() + begin, end - begin),
                    nodes_seen_, static_cast<uint64_t>(where(begin))));
        ++nodes_seen_;
        begin = end;
        RETURN_IF_ERROR(expect_more("',' or ']'"));
        if (buf[begin] == ',') {
          ++begin;
        } else if (buf[begin] != ']') {
          return malformed(begin, "expected ',' or ']' after a node");
        }
      }
    } else {
      size_t end;
      RETURN_IF_ERROR(scan_value(&end));
      if (end - begin <= kMaxFieldBytes)
        fields_[key].assign(buf.data() + begin, end - begin);
      begin = end;
    }
    RETURN_IF_ERROR(expect_more("',' or '}'"));
    if (buf[begin] == ',') {
      ++begin;
    } else if (buf[begin] == '}') {
      break;
    } else {
      return malformed(begin, "expected ',' or '}' after a field");
    }
  }
  ++begin;  // the closing '}'
  // Anything but whitespace after the object is a damaged or concatenated
  // file; accepting it would silently drop the rest.
  ASSIGN_OR_RETURN(bool trailing, skip_space());
  if (trailing) return malformed(begin, "data after the end of the trace");
  if (!saw_nodes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not an execution trace: no `nodes` array", path_));
  }
  return absl::OkStatus();
}

}  // namespace et::convert
