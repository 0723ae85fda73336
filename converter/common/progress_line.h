// The one-line progress of a conversion on stderr (--progress): bytes read,
// then the stage, at most a few times a second. Shared by the ET reader, which
// reports bytes, and the graph stages, which report their stage.
#ifndef CONVERTER_COMMON_PROGRESS_LINE_H_
#define CONVERTER_COMMON_PROGRESS_LINE_H_

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace et::convert {

// Progress on stderr, at most a few times a second.
class ProgressLine {
 public:
  ProgressLine(bool enabled, const std::string& path)
      : enabled_(enabled), path_(path) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0) total_bytes_ = st.st_size;
  }
  void Update(int64_t bytes) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    fprintf(stderr, "\ret-convert: %s: %.0f%% read", path_.c_str(),
            total_bytes_ > 0 ? 100.0 * bytes / total_bytes_ : 0.0);
  }
  void Stage(const char* what) {
    if (enabled_)
      fprintf(stderr, "\ret-convert: %s: %-20s", path_.c_str(), what);
  }
  ~ProgressLine() {
    if (enabled_) fprintf(stderr, "\r\033[K");
  }
  int64_t total_bytes() const { return total_bytes_; }

 private:
  bool enabled_;
  std::string path_;
  int64_t total_bytes_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace et::convert

#endif  // CONVERTER_COMMON_PROGRESS_LINE_H_
