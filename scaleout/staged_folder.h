// A folder that appears whole or not at all: files are written into a hidden
// temporary sibling (`.<name>.tmp.<pid>.<n>` beside it, same filesystem) that
// Commit() renames to the final path. Dropped uncommitted (an error on the
// way), the temporary folder and everything in it are removed. The final path
// must not exist or be an empty folder, so a commit never replaces or mixes
// with files the user has there. Not thread-safe.
#ifndef SCALEOUT_STAGED_FOLDER_H_
#define SCALEOUT_STAGED_FOLDER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace et::scaleout {

// Checks that `dir` may receive a job: absent, or an empty folder. Create()
// runs it too; callers run it first to refuse before any work.
absl::Status CheckStagedFolderTarget(const std::string& dir);

class StagedFolder {
 public:
  // Checks `dir` (absent, or an empty folder) and creates the temporary one.
  static absl::StatusOr<std::unique_ptr<StagedFolder>> Create(
      const std::string& dir);
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where to write: the temporary folder until Commit().
  const std::string& staging_path() const { return staging_; }
  // `name` inside the temporary folder.
  std::string StagingFile(const std::string& name) const;
  // Renames the temporary folder to the final path.
  absl::Status Commit();

 private:
  StagedFolder(std::string dir, std::string staging)
      : dir_(std::move(dir)), staging_(std::move(staging)) {}
  std::string dir_;
  std::string staging_;
  bool committed_ = false;
};

}  // namespace et::scaleout

#endif  // SCALEOUT_STAGED_FOLDER_H_
