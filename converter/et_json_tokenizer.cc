// Chunked structural scan of an ET JSON file; see et_json_tokenizer.h.
#include "converter/et_json_tokenizer.h"

#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/numeric/bits.h"
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

// What one structural byte does to ScanContainer's state.
enum class Step { kGoOn, kSkipNext, kDone, kBad, kTooDeep };

// Bit k set where bits 0..k of `x` hold an odd number of ones: with `x` the
// quotes of a block, the bytes inside strings (opening quote included).
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// Ones in `x`. absl::popcount is a libgcc call where the x86-64 baseline has
// no POPCNT (2% of the CPU time on a 27k-node trace); this is its bit trick
// inline.
int CountOnes(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return static_cast<int>((x * 0x0101010101010101u) >> 56);
}

// Scans past an object or array starting at `p` (which is '{' or '['). Only
// quotes, backslashes and brackets matter: a backslash in a string skips the
// byte after it (so an escaped quote is not a closing one) and brackets count
// outside strings. With SSE2, 64-byte blocks without a backslash are done with
// masks: the string bytes come from a prefix XOR of the quotes, and the depth
// moves by the count of brackets outside strings; only a block where the value
// may close is walked bracket by bracket. Blocks with a backslash (none in a
// 21 MB recorded 1.1.0 trace, 24 in resnet's 12 MB) and the tail go through
// visit(), 16 bytes at a time. The byte-by-byte scan with a memchr per string
// was 15% of the CPU time on a 27k-node 1.1.0 trace.
Scan ScanContainer(const char* buf, size_t p, size_t n, size_t* end) {
  int depth = 0;
  bool in_string = false;
  auto visit = [&](size_t at) -> Step {
    const char c = buf[at];
    if (in_string) {
      if (c == '\\') return Step::kSkipNext;
      if (c == '"') in_string = false;
      return Step::kGoOn;
    }
    switch (kClasses.of[static_cast<uint8_t>(c)]) {
      case kQuote:
        in_string = true;
        return Step::kGoOn;
      case kOpen:
        // Nothing real nests this deep; later stages walk values, and a
        // bound here keeps every one of them shallow.
        return ++depth > kMaxNestingDepth ? Step::kTooDeep : Step::kGoOn;
      case kClose:
        if (--depth == 0) {
          *end = at + 1;
          return Step::kDone;
        }
        return depth < 0 ? Step::kBad : Step::kGoOn;
      default:  // a backslash outside a string, or a byte the mask over-reports
        return Step::kGoOn;
    }
  };
  size_t i = p;
#if defined(__SSE2__)
  // '{' '[' are 0x7B 0x5B, '}' ']' 0x7D 0x5D and '\\' 0x5C: OR-ing in 0x20
  // folds each pair onto one value (the third compare also hits '|', which
  // visit() passes over).
  const __m128i fold = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i backslash = _mm_set1_epi8('|');
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i exact_backslash = _mm_set1_epi8('\\');
  auto bits = [](__m128i eq, int shift) {
    return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(eq)))
           << shift;
  };
  // Does the 64 bytes at `at` with masks; false (nothing done) when they hold
  // a backslash. Sets *done and *end when the value closes in them.
  auto block = [&](size_t at, bool* done, bool* too_deep) -> bool {
    uint64_t quotes = 0, opens = 0, closes = 0, backslashes = 0;
    for (int k = 0; k < 4; ++k) {
      const __m128i v =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + at + 16 * k));
      const __m128i f = _mm_or_si128(v, fold);
      quotes |= bits(_mm_cmpeq_epi8(v, quote), 16 * k);
      opens |= bits(_mm_cmpeq_epi8(f, open), 16 * k);
      closes |= bits(_mm_cmpeq_epi8(f, close), 16 * k);
      backslashes |= bits(_mm_cmpeq_epi8(v, exact_backslash), 16 * k);
    }
    if (backslashes != 0) return false;
    const uint64_t strings =
        PrefixXor(quotes) ^ (in_string ? ~uint64_t{0} : uint64_t{0});
    in_string = (strings >> 63) != 0;
    opens &= ~strings;
    closes &= ~strings;
    const int n_closes = CountOnes(closes);
    if (n_closes < depth) {  // cannot close here
      // A block adds at most 64 levels, so the bound is seen within 64.
      depth += CountOnes(opens) - n_closes;
      *too_deep = depth > kMaxNestingDepth;
      return true;
    }
    for (uint64_t both = opens | closes; both != 0; both &= both - 1) {
      const int j = absl::countr_zero(both);
      if ((opens >> j) & 1) {
        if (++depth > kMaxNestingDepth) {
          *too_deep = true;
          return true;
        }
      } else if (--depth == 0) {
        *end = at + static_cast<size_t>(j) + 1;
        *done = true;
        return true;
      }
    }
    return true;
  };
  while (i + 16 <= n) {
    bool done = false, too_deep = false;
    if (i + 64 <= n && block(i, &done, &too_deep)) {
      if (too_deep) return Scan::kTooDeep;
      if (done) return Scan::kDone;
      i += 64;
      continue;
    }
    // The tail, or a block with a backslash: 16 bytes through visit().
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + i));
    const __m128i f = _mm_or_si128(v, fold);
    const __m128i hits = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close)),
        _mm_or_si128(_mm_cmpeq_epi8(f, backslash), _mm_cmpeq_epi8(v, quote)));
    uint32_t mask = static_cast<uint32_t>(_mm_movemask_epi8(hits));
    size_t next = i + 16;
    while (mask != 0) {
      const int j = absl::countr_zero(mask);
      mask &= mask - 1;
      switch (visit(i + static_cast<size_t>(j))) {
        case Step::kGoOn:
          break;
        case Step::kSkipNext:
          if (j == 15) {
            next = i + 17;
          } else {
            mask &= ~(1u << (j + 1));
          }
          break;
        case Step::kDone:
          return Scan::kDone;
        case Step::kBad:
          return Scan::kBad;
        case Step::kTooDeep:
          return Scan::kTooDeep;
      }
    }
    i = next;
  }
#endif
  for (; i < n; ++i) {
    switch (visit(i)) {
      case Step::kGoOn:
        break;
      case Step::kSkipNext:
        ++i;
        break;
      case Step::kDone:
        return Scan::kDone;
      case Step::kBad:
        return Scan::kBad;
      case Step::kTooDeep:
        return Scan::kTooDeep;
    }
  }
  return Scan::kNeedMore;
}

// Scans past one JSON value starting at `p` (no leading whitespace). Brackets
// are matched and strings skipped; scalars end at the next structural
// character.
Scan ScanValue(const char* buf, size_t p, size_t n, size_t* end) {
  const char c0 = buf[p];
  if (c0 == '"') return ScanString(buf, p, n, end);
  if (c0 == '{' || c0 == '[') return ScanContainer(buf, p, n, end);
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
