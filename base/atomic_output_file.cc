// Whole-output-or-nothing files; see atomic_output_file.h.
#include "base/atomic_output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/path.h"

namespace et {

namespace {

// Live temp files, for the signal handler. Fixed slots of heap strings that
// are never freed while registered, so the handler (which may not lock or
// allocate) can read them; 256 is far more than any tool has open at once
// (et-convert: one per conversion thread). A full table only loses the
// cleanup-on-signal for the extra file.
constexpr int kTempSlots = 256;
std::atomic<const char*> temp_slots[kTempSlots];
// Staging folders (flat: files only), removed with their files.
constexpr int kFolderSlots = 16;
std::atomic<const char*> folder_slots[kFolderSlots];
std::once_flag install_once;

// Empties and removes a flat folder with system calls only (opendir and
// readdir allocate, which a signal handler may not).
void RemoveFlatFolder(const char* dir) {
  const int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  alignas(8) char buffer[8192];
  // Unlinking while listing may skip entries: list again until a pass finds
  // nothing to remove.
  for (bool removed = true; removed;) {
    removed = false;
    lseek(fd, 0, SEEK_SET);
    long n;
    while ((n = syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0) {
      for (long at = 0; at < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buffer + at);
        at += d->d_reclen;
        if (std::strcmp(d->d_name, ".") == 0 ||
            std::strcmp(d->d_name, "..") == 0) {
          continue;
        }
        removed = unlinkat(fd, d->d_name, 0) == 0 || removed;
      }
    }
  }
  close(fd);
  rmdir(dir);
}

extern "C" void RemoveTempFilesAndDie(int sig) {
  for (auto& slot : temp_slots) {
    if (const char* p = slot.load()) unlink(p);  // async-signal-safe
  }
  for (auto& slot : folder_slots) {
    if (const char* p = slot.load()) RemoveFlatFolder(p);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallCleanupHandlers() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old;
    // Only over the default action: a tool or MPI that handles the signal
    // itself keeps its handler.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      struct sigaction sa = {};
      sa.sa_handler = RemoveTempFilesAndDie;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  }
}

template <int N>
void Register(std::atomic<const char*> (&slots)[N], const std::string& path) {
  std::call_once(install_once, InstallCleanupHandlers);
  char* copy = strdup(path.c_str());
  for (auto& slot : slots) {
    const char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, copy)) return;
  }
  free(copy);
}

template <int N>
void Unregister(std::atomic<const char*> (&slots)[N], const std::string& path) {
  for (auto& slot : slots) {
    const char* p = slot.load();
    if (p != nullptr && path == p && slot.compare_exchange_strong(p, nullptr)) {
      free(const_cast<char*>(p));
      return;
    }
  }
}

void RegisterTemp(const std::string& path) { Register(temp_slots, path); }
void UnregisterTemp(const std::string& path) { Unregister(temp_slots, path); }

}  // namespace

void RegisterTempFile(const std::string& path) { RegisterTemp(path); }
void UnregisterTempFile(const std::string& path) { UnregisterTemp(path); }

void RegisterTempFolder(const std::string& dir) { Register(folder_slots, dir); }
void UnregisterTempFolder(const std::string& dir) {
  Unregister(folder_slots, dir);
}

std::string TempPathFor(absl::string_view path) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = absl::StrCat(path, ".tmp.", getpid(), ".", counter++);
  RegisterTemp(tmp);
  return tmp;
}

void DiscardTempFile(const std::string& tmp) {
  std::remove(tmp.c_str());
  UnregisterTemp(tmp);
}

absl::Status CommitTempFile(const std::string& tmp, const std::string& path) {
  // fsync before rename: otherwise a crash soon after can leave the new name
  // pointing at an empty file on ext4/xfs.
  const int fd = open(tmp.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) close(fd);
    DiscardTempFile(tmp);
    return absl::InternalError(absl::StrFormat(
        "%s: cannot flush output to disk: %s", path, strerror(err)));
  }
  close(fd);
  if (absl::Status kind = CheckOutputFileKind(path); !kind.ok()) {
    DiscardTempFile(tmp);
    return kind;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    DiscardTempFile(tmp);
    return absl::InternalError(absl::StrFormat(
        "%s: cannot rename output into place: %s", path, strerror(err)));
  }
  UnregisterTemp(tmp);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  return WriteFileAtomically(path, absl::MakeConstSpan(&contents, 1));
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::Span<const absl::string_view> parts) {
  std::string tmp = TempPathFor(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      UnregisterTemp(tmp);
      return absl::NotFoundError(absl::StrFormat(
          "%s: cannot open for writing: %s", path, strerror(errno)));
    }
    for (absl::string_view part : parts)
      out.write(part.data(), static_cast<std::streamsize>(part.size()));
    out.close();
    if (!out) {
      DiscardTempFile(tmp);
      return absl::InternalError(absl::StrFormat("%s: write failed", path));
    }
  }
  return CommitTempFile(tmp, path);
}

}  // namespace et
