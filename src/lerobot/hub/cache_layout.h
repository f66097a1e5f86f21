// huggingface_hub's cache layout for one repository (file_download.py):
//   <cache>/<type>s--<org>--<name>/blobs/<etag>            the bytes, named by etag (sha256 or git sha1)
//   <cache>/<type>s--<org>--<name>/refs/<revision>         the commit a branch/tag pointed at
//   <cache>/<type>s--<org>--<name>/snapshots/<commit>/<f>  relative symlink to ../../blobs/<etag>
//   <cache>/.locks/<type>s--<org>--<name>/<etag>.lock      the per-blob download lock
// A download is written to blobs/<etag>.incomplete and renamed only when it is complete and checked.
#pragma once

#include <optional>
#include <string>

#include "lerobot/common/fs.h"

namespace lerobot::hub {

enum class RepoType { kModel, kDataset };

// "model" / "dataset".
const char* repo_type_name(RepoType type);

// "models--org--name" / "datasets--org--name" (repo_folder_name).
std::string repo_folder_name(RepoType type, const std::string& repo_id);

// The model repo id of a snapshot folder in this layout (<cache>/models--org--name/snapshots/<commit>),
// else nullopt: the inverse of repo_folder_name, unique because a repo id never holds "--". A Hub id
// given as --policy.path is replaced by its snapshot folder before the config is parsed; what a
// published file names (an adapter's base_model_name_or_path) is the id, as LeRobot writes it.
std::optional<std::string> model_repo_id_of_snapshot(const fs::path& dir);

// A 40-hex-digit commit id (huggingface_hub's REGEX_COMMIT_HASH).
bool is_commit_hash(const std::string& s);

class RepoCache {
 public:
  RepoCache(fs::path cache_dir, RepoType type, std::string repo_id);

  const fs::path& cache_dir() const { return cache_dir_; }
  const fs::path& storage() const { return storage_; }  // <cache>/<type>s--org--name
  fs::path blob(const std::string& etag) const;
  fs::path incomplete(const std::string& etag) const;
  fs::path lock(const std::string& etag) const;
  fs::path snapshot_dir(const std::string& commit) const;
  fs::path pointer(const std::string& commit, const std::string& filename) const;
  fs::path ref(const std::string& revision) const;

  // refs/<revision> := commit (no newline), only when revision is not the commit itself.
  void write_ref(const std::string& revision, const std::string& commit) const;
  // The commit for `revision`: itself when it is a commit hash, else refs/<revision> if present.
  std::optional<std::string> resolve_cached(const std::string& revision) const;
  // snapshots/<commit>/<filename> -> relpath(blobs/<etag>, its folder); replaces an old link.
  void link_pointer(const std::string& commit, const std::string& filename, const std::string& etag) const;

 private:
  fs::path cache_dir_;
  fs::path storage_;
};

}  // namespace lerobot::hub
