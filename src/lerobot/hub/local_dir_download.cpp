// huggingface_hub's local_dir mode (_local_folder.py, _hf_hub_download_to_local_dir), which
// LeRobot uses for --dataset.root and for resuming a run from a Hub repo: the files land at
// local_dir/<path> themselves, and local_dir/.cache/huggingface/ keeps the bookkeeping:
//   download/<path>.metadata     "<commit>\n<etag>\n<unix time>\n" once the file is complete
//   download/<path>.lock         the flock taken around a file's download
//   download/<b64 sha1 of "<name>.metadata">.<etag>.incomplete   the bytes while they arrive
//   .gitignore ("*") and CACHEDIR.TAG
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/blob_fetch.h"
#include "lerobot/hub/hashing.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub {
namespace {


// base64.urlsafe_b64encode(hashlib.sha1(name).digest()): the incomplete file's prefix.
std::string short_hash(const std::string& name) {
  Sha1 h;
  h.update(name.data(), name.size());
  const std::string hex = h.hex_digest();
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (bytes.size() - i == 2) {  // sha1 is 20 bytes: always two left over, one '=' of padding
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    for (int s = 18; s >= 6; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
    out.push_back('=');
  }
  return out;
}

struct LocalPaths {
  fs::path file, metadata, lock;
  fs::path incomplete(const std::string& etag) const {
    return metadata.parent_path() / (short_hash(metadata.filename().string()) + "." + etag + ".incomplete");
  }
};

// local_dir/.cache/huggingface with its .gitignore and CACHEDIR.TAG (written once).
fs::path huggingface_dir(const fs::path& local_dir) {
  const fs::path dir = local_dir / ".cache" / "huggingface";
  static std::mutex mutex;  // parallel downloads into one folder: one writer of the two files
  std::lock_guard<std::mutex> lock(mutex);
  fs::create_directories(dir);
  std::error_code ec;
  ensure_cachedir_tag(dir);
  if (!fs::exists(dir / ".gitignore", ec)) write_file_atomic(dir / ".gitignore", "*");
  return dir;
}

LocalPaths local_paths(const fs::path& local_dir, const std::string& filename) {
  for (const auto& part : split(filename, '/'))
    if (part.empty() || part == "." || part == "..")
      throw_runtime("refusing the repo file name '" + filename + "' (empty or '..' segments)", local_dir.string());
  LocalPaths p;
  p.file = local_dir / filename;
  p.metadata = huggingface_dir(local_dir) / "download" / (filename + ".metadata");
  p.lock = p.metadata.parent_path() / (fs::path(filename).filename().string() + ".lock");
  fs::create_directories(p.file.parent_path());
  fs::create_directories(p.metadata.parent_path());
  return p;
}

struct LocalMetadata {
  std::string commit, etag;
  double timestamp = 0;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double mtime_s(const fs::path& p) {
  auto t = fs::last_write_time(p);
  auto sys = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      t - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  return std::chrono::duration<double>(sys.time_since_epoch()).count();
}

// read_download_metadata: nothing when absent, malformed, or older than the file (edited since).
std::optional<LocalMetadata> read_metadata(const LocalPaths& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p.metadata, ec) || !fs::is_regular_file(p.file, ec)) return std::nullopt;
  std::ifstream in(p.metadata);
  LocalMetadata m;
  std::string ts;
  if (!std::getline(in, m.commit) || !std::getline(in, m.etag) || !std::getline(in, ts)) return std::nullopt;
  try {
    m.timestamp = std::stod(ts);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (mtime_s(p.file) - 1 > m.timestamp) return std::nullopt;  // modified after the download
  return m;
}

void write_metadata(const LocalPaths& p, const std::string& commit, const std::string& etag) {
  char ts[64];
  std::snprintf(ts, sizeof(ts), "%.6f", now_s());
  write_file_atomic(p.metadata, commit + "\n" + etag + "\n" + ts + "\n");
}

}  // namespace

fs::path HubClient::download_to_local_dir(const fs::path& local_dir, RepoType type, const std::string& repo_id,
                                          const std::string& revision, const std::string& filename) const {
  RequestContext ctx{type, repo_id, revision, filename};
  const LocalPaths p = local_paths(local_dir, filename);
  std::error_code ec;
  auto meta = read_metadata(p);
  if (is_commit_hash(revision) && meta && meta->commit == revision) return p.file;
  if (env_.offline) {
    if (fs::is_regular_file(p.file, ec)) return p.file;
    throw_usage(describe(ctx) + " is not in " + local_dir.string() + " and HF_HUB_OFFLINE is set", p.file.string(),
                "unset HF_HUB_OFFLINE to download it");
  }
  const FileMetadata m = file_metadata(type, repo_id, revision, filename);
  DownloadLock lock(p.lock);
  meta = read_metadata(p);
  if (fs::is_regular_file(p.file, ec)) {
    // Up to date: the same etag, or (no bookkeeping) an LFS file whose sha256 is the etag.
    if ((meta && meta->etag == m.etag) || (!meta && is_sha256_hex(m.etag) && sha256_file(p.file) == m.etag)) {
      write_metadata(p, m.commit, m.etag);
      return p.file;
    }
  }
  fetch_checked(*this, p.incomplete(m.etag), p.file, m, ctx, local_dir);
  write_metadata(p, m.commit, m.etag);
  return p.file;
}

void HubClient::download_files_to_local_dir(const fs::path& local_dir, RepoType type, const std::string& repo_id,
                                            const std::string& commit, const std::vector<std::string>& files) const {
  for_each_parallel(files, [&](const std::string& f) { download_to_local_dir(local_dir, type, repo_id, commit, f); });
}

Snapshot HubClient::snapshot_to_local_dir(const fs::path& local_dir, RepoType type, const std::string& repo_id,
                                          const std::string& revision,
                                          const std::function<bool(const std::string&)>& wanted) const {
  Snapshot snap;
  snap.dir = local_dir;
  if (env_.offline) {  // what is there is what we have (huggingface_hub returns local_dir too)
    std::error_code ec;
    if (!fs::is_directory(local_dir, ec))
      throw_usage(std::string(repo_type_name(type)) + " '" + repo_id + "' is not in " + local_dir.string() +
                      " and HF_HUB_OFFLINE is set",
                  local_dir.string(), "unset HF_HUB_OFFLINE to download it");
    for (auto it = fs::recursive_directory_iterator(local_dir); it != fs::recursive_directory_iterator(); ++it) {
      if (it->path().filename() == ".cache") {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_directory()) snap.files.push_back(it->path().lexically_relative(local_dir).generic_string());
    }
    return snap;
  }
  RepoInfo info = repo_info(type, repo_id, revision);
  snap.commit = info.commit;
  snap.files = info.files;
  std::vector<std::string> chosen;
  for (const auto& f : info.files)
    if (!wanted || wanted(f)) chosen.push_back(f);
  fs::create_directories(local_dir);
  download_files_to_local_dir(local_dir, type, repo_id, info.commit, chosen);
  return snap;
}

}  // namespace lerobot::hub
