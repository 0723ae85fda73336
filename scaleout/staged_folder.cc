// See staged_folder.h.
#include "scaleout/staged_folder.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_output_file.h"

namespace et::scaleout {
namespace {

namespace fs = std::filesystem;

std::atomic<int64_t> staging_counter{0};

}  // namespace

absl::Status CheckStagedFolderTarget(const std::string& dir) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (ec == std::errc::not_a_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": a file is in the way of its parent folder"));
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": cannot inspect: ", ec.message()));
  }
  if (!fs::exists(status)) return absl::OkStatus();
  if (!fs::is_directory(status)) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, ": a file is in the way (expected a new or empty folder)"));
  }
  if (!fs::is_empty(dir, ec) || ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir,
        ": folder exists and is not empty (a job is written only "
        "into a new or empty folder; remove it or choose another)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StagedFolder>> StagedFolder::Create(
    const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("empty output folder");
  if (absl::Status s = CheckStagedFolderTarget(dir); !s.ok()) return s;
  fs::path target(dir);
  if (!target.has_filename()) target = target.parent_path();  // "out/"
  const fs::path parent =
      target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string staging =
      (parent / absl::StrCat(".", target.filename().string(), ".tmp.", getpid(),
                             ".", staging_counter.fetch_add(1)))
          .string();
  std::error_code ec;
  if (!fs::create_directory(staging, ec) || ec) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": cannot create the temporary folder ", staging,
                     ": ", ec ? ec.message() : "it already exists"));
  }
  RegisterTempFolder(staging);  // removed on SIGINT/SIGTERM too
  return std::unique_ptr<StagedFolder>(
      new StagedFolder(target.string(), staging));
}

StagedFolder::~StagedFolder() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);  // best effort: nothing else to report to
  UnregisterTempFolder(staging_);
}

std::string StagedFolder::StagingFile(const std::string& name) const {
  return (fs::path(staging_) / name).string();
}

absl::Status StagedFolder::Commit() {
  // rename(2) replaces an empty folder atomically and refuses a non-empty
  // one, so a folder filled since Create() is never overwritten.
  if (std::rename(staging_.c_str(), dir_.c_str()) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir_,
        ": cannot move the finished job into place: ", std::strerror(errno)));
  }
  committed_ = true;
  UnregisterTempFolder(staging_);
  return absl::OkStatus();
}

}  // namespace et::scaleout
