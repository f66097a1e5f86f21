// Internal to hub/: the checked transfer of one repo file's bytes, shared by the cache layout
// (blobs/<etag>) and LeRobot's --dataset.root downloads (huggingface_hub's local_dir mode).
#pragma once

#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"
#include "lerobot/hub/hub_errors.h"

namespace lerobot::hub {

// An exclusive flock on `path` (created with mode 0664 whatever the umask, as huggingface_hub's
// FileLock makes it, so a cache shared by a group stays usable), so two processes (our ranks, or
// Python next to us) never write the same file at once.
class DownloadLock {
 public:
  explicit DownloadLock(const fs::path& path);
  ~DownloadLock();
  DownloadLock(const DownloadLock&) = delete;
  DownloadLock& operator=(const DownloadLock&) = delete;

 private:
  int fd_ = -1;
};

// Fetches m.download_url into `part` (resumed by Range, retried with back-off) and renames it to
// `dest` only once its size is m.size and its sha256 / git sha1 is m.etag; a damaged file is
// deleted and reported naming `where`. The caller holds the lock of `dest`.
void fetch_checked(const HubClient& client, const fs::path& part, const fs::path& dest, const FileMetadata& m,
                   const RequestContext& ctx, const fs::path& where);

// Writes `dir`/CACHEDIR.TAG (the cache-directory tag huggingface_hub writes into a cache it
// downloads into, and into a local_dir's .cache/huggingface) unless it is there; best effort.
void ensure_cachedir_tag(const fs::path& dir);

// A 64-hex-digit sha256 (an LFS file's etag).
bool is_sha256_hex(const std::string& s);

}  // namespace lerobot::hub
