// The cache paths and links huggingface_hub writes (file_download.py: repo_folder_name,
// _cache_commit_hash_for_specific_revision, _create_symlink).
#include "lerobot/hub/cache_layout.h"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {

const char* repo_type_name(RepoType type) { return type == RepoType::kDataset ? "dataset" : "model"; }

std::string repo_folder_name(RepoType type, const std::string& repo_id) {
  std::string out = std::string(repo_type_name(type)) + "s";
  for (const auto& part : split(repo_id, '/')) out += "--" + part;
  return out;
}

std::optional<std::string> model_repo_id_of_snapshot(const fs::path& dir) {
  const fs::path d = dir.lexically_normal().filename().empty() ? dir.lexically_normal().parent_path() : dir.lexically_normal();
  const fs::path snapshots = d.parent_path();
  if (!is_commit_hash(d.filename().string()) || snapshots.filename() != "snapshots") return std::nullopt;
  const std::string folder = snapshots.parent_path().filename().string();
  const std::string prefix = "models--";
  if (folder.rfind(prefix, 0) != 0) return std::nullopt;
  std::string id = folder.substr(prefix.size());
  const size_t sep = id.find("--");
  if (sep != std::string::npos) id.replace(sep, 2, "/");
  if (id.empty() || id.find("--") != std::string::npos || id.front() == '/' || id.back() == '/') return std::nullopt;
  return id;
}

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

RepoCache::RepoCache(fs::path cache_dir, RepoType type, std::string repo_id)
    : cache_dir_(std::move(cache_dir)), storage_(cache_dir_ / repo_folder_name(type, repo_id)) {}

fs::path RepoCache::blob(const std::string& etag) const { return storage_ / "blobs" / etag; }
fs::path RepoCache::incomplete(const std::string& etag) const {
  return storage_ / "blobs" / (etag + ".incomplete");
}
fs::path RepoCache::lock(const std::string& etag) const {
  return cache_dir_ / ".locks" / storage_.filename() / (etag + ".lock");
}
fs::path RepoCache::snapshot_dir(const std::string& commit) const { return storage_ / "snapshots" / commit; }
fs::path RepoCache::pointer(const std::string& commit, const std::string& filename) const {
  return snapshot_dir(commit) / filename;
}
fs::path RepoCache::ref(const std::string& revision) const { return storage_ / "refs" / revision; }

void RepoCache::write_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;
  fs::path p = ref(revision);
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    std::ifstream in(p);
    std::string old((std::istreambuf_iterator<char>(in)), {});
    if (old == commit) return;
  }
  fs::create_directories(p.parent_path());
  write_file_atomic(p, commit);
}

std::optional<std::string> RepoCache::resolve_cached(const std::string& revision) const {
  if (is_commit_hash(revision)) return revision;
  std::ifstream in(ref(revision));
  if (!in) return std::nullopt;
  std::string commit((std::istreambuf_iterator<char>(in)), {});
  commit = trim(commit);
  if (!is_commit_hash(commit)) return std::nullopt;
  return commit;
}

void RepoCache::link_pointer(const std::string& commit, const std::string& filename,
                             const std::string& etag) const {
  fs::path dst = pointer(commit, filename);
  fs::create_directories(dst.parent_path());
  // os.path.relpath: lexical, on absolute paths (no link in the cache path is resolved).
  fs::path target = fs::absolute(blob(etag)).lexically_normal().lexically_relative(
      fs::absolute(dst.parent_path()).lexically_normal());  // ../../blobs/<etag>, one more .. per folder
  std::error_code ec;
  if (fs::is_symlink(dst, ec) && fs::read_symlink(dst, ec) == target) return;
  // A link made beside the pointer and renamed over it: a reader never sees a missing file.
  // The temporary name is unique per process and thread: ranks may link the same file at once.
  fs::path tmp = dst;
  tmp += ".tmp-link-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  fs::remove(tmp, ec);
  fs::create_symlink(target, tmp, ec);
  if (ec) throw_runtime("cannot create the snapshot link: " + ec.message(), dst.string(),
                        "check that the cache folder is writable and on a filesystem with symlinks");
  fs::rename(tmp, dst, ec);
  if (ec) throw_runtime("cannot place the snapshot link: " + ec.message(), dst.string());
}

}  // namespace lerobot::hub
