// Chunked structural scan of an ET JSON file; see et_json_tokenizer.h.
#include "converter/et/et_json_tokenizer.h"

#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/numeric/bits.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"

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

// What one structural byte does to ContainerScan's state.
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

#if defined(__SSE2__)
// '{' '[' are 0x7B 0x5B, '}' ']' 0x7D 0x5D and '\\' 0x5C: OR-ing in 0x20
// folds each pair onto one value (the folded backslash compare also hits '|',
// which Visit() passes over).
struct Masks16 {
  uint32_t quotes, opens, closes, backslashes, folded_backslashes;
};
Masks16 Classify16(const char* at) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i f = _mm_or_si128(v, _mm_set1_epi8(0x20));
  auto bits = [](__m128i eq) {
    return static_cast<uint32_t>(_mm_movemask_epi8(eq));
  };
  return {bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))),
          bits(_mm_cmpeq_epi8(f, _mm_set1_epi8('{'))),
          bits(_mm_cmpeq_epi8(f, _mm_set1_epi8('}'))),
          bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
          bits(_mm_cmpeq_epi8(f, _mm_set1_epi8('|')))};
}

// A 64-byte block's brackets outside strings, for ContainerScan::Block64.
struct Masks64 {
  uint64_t opens, closes;
  int n_opens, n_closes;
  bool backslash;        // the block holds one: it must be walked instead
  bool in_string_after;  // inside a string at the block's end
};

void ClassifySse2(const char* at, bool in_string, Masks64* out) {
  uint64_t quotes = 0, opens = 0, closes = 0, backslashes = 0;
  for (int k = 0; k < 4; ++k) {
    const Masks16 m = Classify16(at + 16 * k);
    quotes |= uint64_t{m.quotes} << (16 * k);
    opens |= uint64_t{m.opens} << (16 * k);
    closes |= uint64_t{m.closes} << (16 * k);
    backslashes |= uint64_t{m.backslashes} << (16 * k);
  }
  const uint64_t strings =
      PrefixXor(quotes) ^ (in_string ? ~uint64_t{0} : uint64_t{0});
  out->backslash = backslashes != 0;
  out->in_string_after = (strings >> 63) != 0;
  out->opens = opens & ~strings;
  out->closes = closes & ~strings;
  out->n_opens = CountOnes(out->opens);
  out->n_closes = CountOnes(out->closes);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define ET_TOKENIZER_AVX2 1
// The same with 32-byte compares, a carry-less multiply for the prefix XOR
// and POPCNT, where the CPU has them (checked once at start): about a third
// of the instructions of the SSE2 version, whose block was 11% of
// et-convert's instructions on a 27k-node trace.
__attribute__((target("avx2,pclmul,popcnt"))) void ClassifyAvx2(const char* at,
                                                                bool in_string,
                                                                Masks64* out) {
  const __m256i fold = _mm256_set1_epi8(0x20);
  uint64_t quotes = 0, opens = 0, closes = 0, backslashes = 0;
  for (int k = 0; k < 2; ++k) {
    const __m256i v =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32 * k));
    const __m256i f = _mm256_or_si256(v, fold);
    // (No lambda: it would not get this function's target.)
    const int shift = 32 * k;
    quotes |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(
                  _mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))))}
              << shift;
    opens |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(
                 _mm256_cmpeq_epi8(f, _mm256_set1_epi8('{'))))}
             << shift;
    closes |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(
                  _mm256_cmpeq_epi8(f, _mm256_set1_epi8('}'))))}
              << shift;
    backslashes |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(
                       _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))))}
                   << shift;
  }
  // Multiplying by all ones without carries is the prefix XOR.
  const uint64_t prefix = static_cast<uint64_t>(_mm_cvtsi128_si64(
      _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(quotes)),
                           _mm_set1_epi8(static_cast<char>(0xFF)), 0)));
  const uint64_t strings = prefix ^ (in_string ? ~uint64_t{0} : uint64_t{0});
  out->backslash = backslashes != 0;
  out->in_string_after = (strings >> 63) != 0;
  out->opens = opens & ~strings;
  out->closes = closes & ~strings;
  out->n_opens = static_cast<int>(_mm_popcnt_u64(out->opens));
  out->n_closes = static_cast<int>(_mm_popcnt_u64(out->closes));
}

bool CpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
         __builtin_cpu_supports("popcnt");
}
// Not const: tests turn it off to run the SSE2 blocks too.
bool use_avx2 = CpuHasAvx2();
#endif

// Scans past an object or array starting at `p` (which is '{' or '['). Only
// quotes, backslashes and brackets matter: a backslash in a string skips the
// byte after it (so an escaped quote is not a closing one) and brackets count
// outside strings. With SSE2, 64-byte blocks without a backslash are done with
// masks: the string bytes come from a prefix XOR of the quotes, and the depth
// moves by the count of brackets outside strings; only a block where the value
// may close is walked bracket by bracket. Blocks with a backslash (none in a
// 21 MB recorded 1.1.0 trace, 24 in resnet's 12 MB) and the tail go through
// Visit(), 16 bytes at a time. The byte-by-byte scan with a memchr per string
// was 15% of the CPU time on a 27k-node 1.1.0 trace.
class ContainerScan {
 public:
  ContainerScan(const char* buf, size_t n) : buf_(buf), n_(n) {}

  Scan Run(size_t p, size_t* end) {
    size_t i = p;
#if defined(__SSE2__)
    while (i + 16 <= n_) {
      Step step = Step::kGoOn;
      __builtin_prefetch(buf_ + i + 2048);
      if (i + 64 <= n_ && Block64(i, &step, end)) {
        i += 64;
      } else {
        i = Walk16(i, &step, end);
      }
      if (step != Step::kGoOn) return Finish(step);
    }
#endif
    for (; i < n_; ++i) {
      const Step step = Visit(i, end);
      if (step == Step::kSkipNext) {
        ++i;
      } else if (step != Step::kGoOn) {
        return Finish(step);
      }
    }
    return Scan::kNeedMore;
  }

 private:
  static Scan Finish(Step step) {
    if (step == Step::kDone) return Scan::kDone;
    return step == Step::kBad ? Scan::kBad : Scan::kTooDeep;
  }

  // One structural (or possibly structural) byte.
  Step Visit(size_t at, size_t* end) {
    const char c = buf_[at];
    if (in_string_) {
      if (c == '\\') return Step::kSkipNext;
      if (c == '"') in_string_ = false;
      return Step::kGoOn;
    }
    switch (kClasses.of[static_cast<uint8_t>(c)]) {
      case kQuote:
        in_string_ = true;
        return Step::kGoOn;
      case kOpen:
        // Nothing real nests this deep; later stages walk values, and a
        // bound here keeps every one of them shallow.
        return ++depth_ > kMaxNestingDepth ? Step::kTooDeep : Step::kGoOn;
      case kClose:
        if (--depth_ == 0) {
          *end = at + 1;
          return Step::kDone;
        }
        return depth_ < 0 ? Step::kBad : Step::kGoOn;
      default:  // a backslash outside a string, or a byte the mask over-reports
        return Step::kGoOn;
    }
  }

#if defined(__SSE2__)
  // The 64 bytes at `at` by masks; false (nothing done) when they hold a
  // backslash. Sets *step when the value closes (kDone, *end) or nests too
  // deep in them.
  bool Block64(size_t at, Step* step, size_t* end) {
    Masks64 m;
#if defined(ET_TOKENIZER_AVX2)
    if (use_avx2) {
      ClassifyAvx2(buf_ + at, in_string_, &m);
    } else {
      ClassifySse2(buf_ + at, in_string_, &m);
    }
#else
    ClassifySse2(buf_ + at, in_string_, &m);
#endif
    if (m.backslash) return false;
    in_string_ = m.in_string_after;
    if (m.n_closes < depth_) {  // cannot close here
      // A block adds at most 64 levels, so the bound is seen within 64.
      depth_ += m.n_opens - m.n_closes;
      if (depth_ > kMaxNestingDepth) *step = Step::kTooDeep;
      return true;
    }
    for (uint64_t both = m.opens | m.closes; both != 0; both &= both - 1) {
      const int j = absl::countr_zero(both);
      if ((m.opens >> j) & 1) {
        if (++depth_ > kMaxNestingDepth) {
          *step = Step::kTooDeep;
          return true;
        }
      } else if (--depth_ == 0) {
        *end = at + static_cast<size_t>(j) + 1;
        *step = Step::kDone;
        return true;
      }
    }
    return true;
  }

  // The 16 bytes at `i` through Visit(); returns where to go on (past a byte
  // escaped by the last one). Sets *step when the scan ends in them.
  size_t Walk16(size_t i, Step* step, size_t* end) {
    const Masks16 m = Classify16(buf_ + i);
    uint32_t mask = m.quotes | m.opens | m.closes | m.folded_backslashes;
    size_t next = i + 16;
    while (mask != 0) {
      const int j = absl::countr_zero(mask);
      mask &= mask - 1;
      const Step s = Visit(i + static_cast<size_t>(j), end);
      if (s == Step::kSkipNext) {
        if (j == 15) {
          next = i + 17;
        } else {
          mask &= ~(1u << (j + 1));
        }
      } else if (s != Step::kGoOn) {
        *step = s;
        return next;
      }
    }
    return next;
  }
#endif

  const char* buf_;
  size_t n_;
  int depth_ = 0;
  bool in_string_ = false;
};

// Scans past one JSON value starting at `p` (no leading whitespace). Brackets
// are matched and strings skipped; scalars end at the next structural
// character.
Scan ScanValue(const char* buf, size_t p, size_t n, size_t* end) {
  const char c0 = buf[p];
  if (c0 == '"') return ScanString(buf, p, n, end);
  if (c0 == '{' || c0 == '[') return ContainerScan(buf, n).Run(p, end);
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

bool UseWideScanForTesting(bool wide) {
#if defined(ET_TOKENIZER_AVX2)
  const bool before = use_avx2;
  use_avx2 = wide && CpuHasAvx2();
  return before;
#else
  (void)wide;
  return false;
#endif
}

size_t JsonValueLength(absl::string_view text) {
  size_t end = 0;
  if (text.empty() ||
      ScanValue(text.data(), 0, text.size(), &end) != Scan::kDone) {
    return absl::string_view::npos;
  }
  return end;
}

// A plain trace file mapped read-only, followed by at least kSpanPadding
// readable bytes (zeros): the node texts are handed out in place.
struct EtJsonTokenizer::Mapping {
  // Maps `path` when it is a regular plain file of 2 bytes or more; nullptr
  // otherwise (gzip, a pipe, an empty file, an error), which zlib then reads
  // and reports on as before. read() copied every byte of the file out of the
  // page cache (5% of et-convert's CPU time on a 21 MB trace) and the pipeline
  // copied each node again into its batch.
  static std::unique_ptr<Mapping> Open(const std::string& path);

  const char* data = nullptr;
  size_t size = 0;    // the file's bytes
  size_t length = 0;  // the mapped area: the file, then zero pages
  ~Mapping() {
    if (data != nullptr) munmap(const_cast<char*>(data), length);
  }
};

std::unique_ptr<EtJsonTokenizer::Mapping> EtJsonTokenizer::Mapping::Open(
    const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st;
  unsigned char magic[2];
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2 ||
      pread(fd, magic, 2, 0) != 2 || (magic[0] == 0x1f && magic[1] == 0x8b)) {
    return nullptr;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t length = (size + kSpanPadding + page - 1) / page * page;
  // Pages past the end of a file cannot be read through its mapping: reserve
  // the whole area as zero pages, then map the file over its start.
  void* area =
      mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return nullptr;
  if (mmap(area, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
      MAP_FAILED) {
    munmap(area, length);
    return nullptr;
  }
  auto mapping = std::make_unique<Mapping>();
  mapping->data = static_cast<const char*>(area);
  mapping->size = size;
  mapping->length = length;
  return mapping;
}

// The input of one Run(): a window buf()[0, n) over the decoded trace, of
// which [begin, n) is not consumed yet. From zlib the window is a buffer that
// Refill() compacts and appends a chunk to; from a mapping it is a view that
// Refill() slides and extends by the same amounts, so the one-value limit and
// every error offset come out the same for both.
class EtJsonTokenizer::Reader {
 public:
  Reader(const std::string& path, const Mapping* mapping, gzFile file,
         const ProgressCallback& on_progress, TraceTextSource* text,
         const int64_t& nodes_seen)
      : path_(path),
        mapping_(mapping),
        file_(file),
        on_progress_(on_progress),
        text_(text),
        nodes_seen_(nodes_seen) {
    if (mapping_ == nullptr) buffer_.resize(capacity_);
  }

  size_t begin = 0;  // first unconsumed byte of the window
  size_t n = 0;      // end of the window
  bool eof = false;

  const char* buf() const {
    return mapping_ != nullptr ? mapping_->data + consumed_before_
                               : buffer_.data();
  }
  char at() const { return buf()[begin]; }
  int64_t Where(size_t p) const {
    return consumed_before_ + static_cast<int64_t>(p);
  }

  absl::Status Malformed(size_t p, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: invalid JSON at byte %d (after node #%d): %s",
                        path_, Where(p), nodes_seen_, what));
  }

  // Moves the window past the consumed bytes and extends it by a chunk;
  // grows it for huge values.
  absl::Status Refill() {
    if (begin > 0) {
      if (mapping_ == nullptr)
        memmove(buffer_.data(), buffer_.data() + begin, n - begin);
      consumed_before_ += static_cast<int64_t>(begin);
      n -= begin;
      begin = 0;
    }
    if (capacity_ - kSpanPadding - n < kChunkBytes / 2) {
      // Only one value (a node, or a top-level field) is ever held whole; a
      // gzip of '[' or of one endless string otherwise grew to gigabytes.
      if (n > kMaxNodeBytes) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "%s: one JSON value starting at byte %d (after node #%d) is over "
            "%d MiB, the limit on one node",
            path_, consumed_before_, nodes_seen_, kMaxNodeBytes >> 20));
      }
      capacity_ *= 2;
      if (mapping_ == nullptr) buffer_.resize(capacity_);
    }
    const size_t room = capacity_ - kSpanPadding - n;
    ASSIGN_OR_RETURN(const size_t got,
                     mapping_ != nullptr ? Extend(room) : Inflate(room));
    n += got;
    if (mapping_ == nullptr) memset(buffer_.data() + n, ' ', kSpanPadding);
    if (on_progress_) {
      on_progress_(mapping_ != nullptr ? Where(n) : gzoffset(file_));
    }
    return absl::OkStatus();
  }

  // Skips whitespace, refilling as needed; false at end of input.
  absl::StatusOr<bool> SkipSpace() {
    while (true) {
      while (begin < n && IsSpace(buf()[begin])) ++begin;
      if (begin < n) return true;
      if (eof) return false;
      RETURN_IF_ERROR(Refill());
    }
  }

  // Skips whitespace; fails when the input ends where `what` was expected.
  absl::Status ExpectMore(absl::string_view what) {
    ASSIGN_OR_RETURN(bool more, SkipSpace());
    if (!more) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: truncated JSON: input ends where %s was "
                          "expected (after node #%d)",
                          path_, what, nodes_seen_));
    }
    return absl::OkStatus();
  }

  // Scans one value at `begin`, refilling until it is complete.
  absl::Status ScanOne(size_t* end) {
    while (true) {
      const Scan s = ScanValue(buf(), begin, n, end);
      if (s == Scan::kDone) return absl::OkStatus();
      if (s == Scan::kBad) return Malformed(begin, "unexpected character");
      if (s == Scan::kTooDeep) {
        return Malformed(begin, absl::StrFormat("nested deeper than %d levels",
                                                kMaxNestingDepth));
      }
      if (eof) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: truncated JSON: input ends inside a value at "
                            "byte %d (after node #%d)",
                            path_, Where(n), nodes_seen_));
      }
      RETURN_IF_ERROR(Refill());
    }
  }

 private:
  // Up to `room` more bytes of the mapped file: what gzread returns for a
  // plain file (it fills the request unless the file ends).
  absl::StatusOr<size_t> Extend(size_t room) {
    const size_t at = static_cast<size_t>(Where(n));
    const size_t got = std::min(room, mapping_->size - at);
    if (got == 0) eof = true;
    const uint64_t decoded = at + got;
    RETURN_IF_ERROR(CheckGzipExpansion(path_, decoded, decoded));
    if (text_ != nullptr && got > 0 && !text_opened_) {
      text_opened_ = true;
      RETURN_IF_ERROR(text_->OpenPlain(path_));
    }
    return got;
  }

  // Up to `room` more decoded bytes from zlib, appended to the buffer (and to
  // the spill file of a compressed input).
  absl::StatusOr<size_t> Inflate(size_t room) {
    const int got =
        gzread(file_, buffer_.data() + n, static_cast<unsigned>(room));
    int errnum = Z_OK;
    const char* msg = gzerror(file_, &errnum);
    if (got < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR)) {
      // zlib's message starts with the path given to gzopen: drop it.
      absl::string_view detail = msg;
      absl::ConsumePrefix(&detail, path_ + ": ");
      return absl::DataLossError(
          absl::StrFormat("%s: corrupt gzip stream near byte %d: %s", path_,
                          consumed_before_ + n, detail));
    }
    // zlib reports a stream cut before its trailer (CRC and length) as
    // Z_BUF_ERROR with a clean-looking end; the data may be silently short.
    if (got == 0 && errnum == Z_BUF_ERROR) {
      return absl::DataLossError(absl::StrFormat(
          "%s: truncated gzip stream (ends before its trailer) at byte %d",
          path_, consumed_before_ + n));
    }
    if (got == 0) eof = true;
    RETURN_IF_ERROR(CheckGzipExpansion(
        path_, static_cast<uint64_t>(consumed_before_) + n + got,
        static_cast<uint64_t>(gzoffset(file_))));
    if (text_ != nullptr && got > 0) {
      if (!text_opened_) {
        text_opened_ = true;
        RETURN_IF_ERROR(gzdirect(file_) ? text_->OpenPlain(path_)
                                        : text_->OpenSpill(path_));
      }
      if (text_->spilling()) {
        RETURN_IF_ERROR(text_->Append(
            absl::string_view(buffer_.data() + n, static_cast<size_t>(got))));
      }
    }
    return static_cast<size_t>(got);
  }

  const std::string& path_;
  const Mapping* mapping_;  // nullptr: read through zlib
  gzFile file_;
  const ProgressCallback& on_progress_;
  TraceTextSource* text_;
  const int64_t& nodes_seen_;
  std::vector<char> buffer_;  // the window when reading through zlib
  size_t capacity_ = kChunkBytes + kSpanPadding;  // the window's size
  int64_t consumed_before_ = 0;  // decoded bytes before the window
  bool text_opened_ = false;
};

EtJsonTokenizer::EtJsonTokenizer(std::string path) : path_(std::move(path)) {}
EtJsonTokenizer::~EtJsonTokenizer() = default;

bool EtJsonTokenizer::MapIfPlain() {
  if (!map_tried_) {
    map_tried_ = true;
    mapping_ = Mapping::Open(path_);
  }
  return mapping_ != nullptr;
}

void EtJsonTokenizer::DoneBefore(uint64_t offset) {
  constexpr uint64_t kDropStep = 2 << 20;
  if (mapping_ == nullptr || offset < dropped_before_ + kDropStep) return;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t end = offset / page * page;
  madvise(const_cast<char*>(mapping_->data) + dropped_before_,
          end - dropped_before_, MADV_DONTNEED);
  dropped_before_ = end;
}

bool EtJsonTokenizer::spans_outlive_callback() const {
  return mapping_ != nullptr;
}

absl::Status EtJsonTokenizer::Run(const NodeCallback& on_node,
                                  const ProgressCallback& on_progress,
                                  TraceTextSource* text) {
  if (IsDirectory(path_)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory", path_));
  }
  MapIfPlain();
  gzFile file = nullptr;
  if (mapping_ == nullptr) {
    file = gzopen(path_.c_str(), "rb");
    if (file == nullptr) {
      return absl::NotFoundError(
          absl::StrFormat("%s: cannot open: %s", path_, strerror(errno)));
    }
    gzbuffer(file, 1 << 18);
  }
  struct Closer {
    gzFile f;
    ~Closer() {
      if (f != nullptr) gzclose(f);
    }
  } closer{file};
  Reader in(path_, mapping_.get(), file, on_progress, text, nodes_seen_);
  return ReadTrace(in, on_node);
}

namespace {

// Whether buf[p] opens an array whose first element is an object, as the
// legacy profiler's bare event array does (as far as the window shows).
bool StartsAnObjectArray(const char* buf, size_t p, size_t n) {
  for (size_t k = p + 1; k < n; ++k) {
    const char c = buf[k];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c == '{';
  }
  return false;
}

}  // namespace

// The trace object: its fields, then nothing but whitespace.
absl::Status EtJsonTokenizer::ReadTrace(Reader& in,
                                        const NodeCallback& on_node) {
  RETURN_IF_ERROR(in.Refill());
  ASSIGN_OR_RETURN(bool any, in.SkipSpace());
  if (!any)
    return absl::InvalidArgumentError(absl::StrFormat("%s: empty file", path_));
  if (in.at() == '[' && StartsAnObjectArray(in.buf(), in.begin, in.n))
    return KinetoGivenError();
  if (in.at() != '{')
    return in.Malformed(in.begin, "the trace is not a JSON object");
  ++in.begin;
  bool saw_nodes = false;
  while (true) {
    RETURN_IF_ERROR(in.ExpectMore("a field name"));
    if (in.at() == '}') break;
    RETURN_IF_ERROR(ReadField(in, on_node, &saw_nodes));
    RETURN_IF_ERROR(in.ExpectMore("',' or '}'"));
    if (in.at() == ',') {
      ++in.begin;
    } else if (in.at() == '}') {
      break;
    } else {
      return in.Malformed(in.begin, "expected ',' or '}' after a field");
    }
  }
  ++in.begin;  // the closing '}'
  // Anything but whitespace after the object is a damaged or concatenated
  // file; accepting it would silently drop the rest.
  ASSIGN_OR_RETURN(bool trailing, in.SkipSpace());
  if (trailing)
    return in.Malformed(in.begin, "data after the end of the trace");
  if (!saw_nodes && saw_trace_events_) return KinetoGivenError();
  if (!saw_nodes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not an execution trace: no `nodes` array", path_));
  }
  return absl::OkStatus();
}

// A Kineto trace (`traceEvents`, or the legacy profiler's bare array of
// events) where the ET belongs: the usual slip of passing the wrong one of
// the two files a recording makes.
absl::Status EtJsonTokenizer::KinetoGivenError() const {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: a Kineto/profiler trace (op timings), not an execution trace: "
      "pass it with --kineto beside the execution trace of the same run "
      "(et-convert et.json out.et --kineto %s)",
      path_, path_));
}

// One `"key": value` of the trace object: `nodes` element by element, any
// other field kept as raw text when small.
absl::Status EtJsonTokenizer::ReadField(Reader& in, const NodeCallback& on_node,
                                        bool* saw_nodes) {
  if (in.at() != '"') return in.Malformed(in.begin, "expected a field name");
  size_t key_end;
  RETURN_IF_ERROR(in.ScanOne(&key_end));
  std::string key(in.buf() + in.begin + 1, key_end - in.begin - 2);
  in.begin = key_end;
  RETURN_IF_ERROR(in.ExpectMore("':'"));
  if (in.at() != ':') return in.Malformed(in.begin, "expected ':'");
  ++in.begin;
  RETURN_IF_ERROR(in.ExpectMore("a value"));
  if (key == "nodes") {
    *saw_nodes = true;
    return ReadNodes(in, on_node);
  }
  if (key == "traceEvents") saw_trace_events_ = true;
  size_t end;
  RETURN_IF_ERROR(in.ScanOne(&end));
  if (end - in.begin <= kMaxFieldBytes)
    fields_[key].assign(in.buf() + in.begin, end - in.begin);
  in.begin = end;
  return absl::OkStatus();
}

// The `nodes` array: each element's text to `on_node`.
absl::Status EtJsonTokenizer::ReadNodes(Reader& in,
                                        const NodeCallback& on_node) {
  if (in.at() != '[') return in.Malformed(in.begin, "`nodes` is not an array");
  ++in.begin;
  while (true) {
    RETURN_IF_ERROR(in.ExpectMore("a node or ']'"));
    if (in.at() == ']') {
      ++in.begin;
      return absl::OkStatus();
    }
    if (in.at() != '{')
      return in.Malformed(in.begin, "a node is not a JSON object");
    size_t end;
    RETURN_IF_ERROR(in.ScanOne(&end));
    RETURN_IF_ERROR(
        on_node(absl::string_view(in.buf() + in.begin, end - in.begin),
                nodes_seen_, static_cast<uint64_t>(in.Where(in.begin))));
    ++nodes_seen_;
    in.begin = end;
    RETURN_IF_ERROR(in.ExpectMore("',' or ']'"));
    if (in.at() == ',') {
      ++in.begin;
    } else if (in.at() != ']') {
      return in.Malformed(in.begin, "expected ',' or ']' after a node");
    }
  }
}

}  // namespace et::convert
