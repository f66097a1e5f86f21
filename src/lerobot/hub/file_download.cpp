// hf_hub_download in C++: HEAD for the commit/etag/size, the blob fetched into
// blobs/<etag>.incomplete (resumed by Range), checked by size and sha256 / git sha1, renamed to
// blobs/<etag> under .locks/<repo>/<etag>.lock, then linked from snapshots/<commit>/<file>.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/blob_fetch.h"
#include "lerobot/hub/hashing.h"
#include "lerobot/hub/hub_client.h"
#include "lerobot/hub/hub_errors.h"

namespace lerobot::hub {
namespace {

bool is_hex(const std::string& s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A line every few seconds while a file larger than 1 MB downloads.
class ProgressLine {
 public:
  ProgressLine(std::string name, uint64_t total, uint64_t start, bool enabled)
      : name_(std::move(name)), total_(total), start_(start), enabled_(enabled && total > (1u << 20)),
        t0_(std::chrono::steady_clock::now()), last_(t0_) {
    if (enabled_) LOG_INFO << "hub: downloading " << name_ << " (" << mb(total_) << " MB"
                           << (start_ ? ", resuming at " + mb(start_) + " MB" : "") << ")";
  }
  void update(uint64_t done_now) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(3)) return;
    last_ = now;
    double s = std::chrono::duration<double>(now - t0_).count();
    LOG_INFO << "hub: " << name_ << " " << mb(start_ + done_now) << "/" << mb(total_) << " MB ("
             << mb(uint64_t(done_now / std::max(s, 1e-3))) << " MB/s)";
  }

 private:
  static std::string mb(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f", bytes / 1048576.0);
    return buf;
  }
  std::string name_;
  uint64_t total_, start_;
  bool enabled_;
  std::chrono::steady_clock::time_point t0_, last_;
};

uint64_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : uint64_t(n);
}

}  // namespace

bool is_sha256_hex(const std::string& s) { return is_hex(s, 64); }

void ensure_cachedir_tag(const fs::path& dir) {
  static const char* kCachedirTag =
      "Signature: 8a477f597d28d172789f06886806bc55\n"
      "# This file is a cache directory tag created by huggingface_hub.\n"
      "# For information about cache directory tags, see:\n"
      "#\thttps://bford.info/cachedir/\n";
  static std::mutex mutex;  // parallel downloads: one writer
  std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  if (fs::exists(dir / "CACHEDIR.TAG", ec)) return;
  try {
    fs::create_directories(dir);
    write_file_atomic(dir / "CACHEDIR.TAG", kCachedirTag);
  } catch (const std::exception&) {  // a read-only cache still serves what it holds
  }
}

DownloadLock::DownloadLock(const fs::path& path) {
  fs::create_directories(path.parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0664);
  if (fd_ < 0) throw_runtime("cannot open the download lock file", path.string(), "check that the folder is writable");
  (void)::fchmod(fd_, 0664);  // another user's lock file keeps its mode
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

DownloadLock::~DownloadLock() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

void fetch_checked(const HubClient& client, const fs::path& part, const fs::path& blob, const FileMetadata& m,
                   const RequestContext& ctx, const fs::path& where) {
  fs::create_directories(part.parent_path());
  const auto& opt = client.options();
  double wait = opt.backoff_initial_s;
  int failures = 0;
  for (;;) {
    uint64_t have = file_size_or_zero(part);
    if (have > m.size) {  // more bytes than announced: not the file the Hub described
      fs::remove(part);
      have = 0;
      if (++failures > opt.max_retries)
        throw_runtime("the server sent more than the " + std::to_string(m.size) + " bytes announced for " + describe(ctx),
                      m.download_url, "run the command again; if it happens again, the server or a proxy alters the file");
    }
    if (have == m.size && fs::exists(part)) break;
    ProgressLine progress(ctx.filename, m.size, have, opt.progress);
    HttpRequest req;
    req.url = m.download_url;
    req.append_to = part;
    req.range_from = have;
    if (!client.env().token.empty()) {
      // The token goes only to the Hub's own host (not to a blob host it redirects to).
      std::string origin = client.env().endpoint;
      if (starts_with(m.download_url, origin + "/")) req.headers.push_back("Authorization: Bearer " + client.env().token);
    }
    req.on_progress = [&](uint64_t now, uint64_t) {
      progress.update(now);
      return true;
    };
    std::string problem;
    try {
      if (have == 0) {
        // Create the file, so an empty blob and a resume both start from a file that exists.
        std::FILE* f = std::fopen(part.c_str(), "ab");
        if (f) std::fclose(f);
      }
      HttpResponse resp = http_perform(req);
      if (resp.status == 416) {  // our offset is past the server's copy: start again
        fs::remove(part);
        problem = "HTTP 416";
      } else if (resp.status == 429 || resp.status >= 500) {
        problem = "HTTP " + std::to_string(resp.status);
      } else if (resp.status != 200 && resp.status != 206) {
        throw_for_status(resp, ctx, client);
      } else if (file_size_or_zero(part) < m.size) {
        problem = "the connection ended after " + std::to_string(file_size_or_zero(part)) + " of " +
                  std::to_string(m.size) + " bytes";
      } else {
        continue;  // loop top checks the size
      }
    } catch (const TransportError& e) {
      problem = e.message;
    }
    if (++failures > opt.max_retries) {
      throw_unreachable(problem + " (the " + std::to_string(file_size_or_zero(part)) +
                            " bytes so far are kept in " + part.string() + " and resumed next time)",
                        ctx, client);
    }
    LOG_WARNING << "hub: " << ctx.filename << ": " << redact(problem, client.env().token) << "; resuming at byte "
                << file_size_or_zero(part) << " in " << wait << " s (retry " << failures << "/" << opt.max_retries
                << ")";
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    wait = std::min(wait * 2, opt.backoff_max_s);
  }
  // The checks before the file becomes visible: size, then the etag's hash.
  uint64_t got = file_size_or_zero(part);
  std::string actual, kind;
  if (is_hex(m.etag, 64)) {
    actual = sha256_file(part);
    kind = "sha256";
  } else if (is_hex(m.etag, 40)) {
    actual = git_blob_sha1_file(part);
    kind = "git sha1";
  }
  if (got != m.size || (!kind.empty() && actual != m.etag)) {
    std::error_code ec;
    fs::remove(part, ec);
    std::string what = got != m.size ? std::to_string(got) + " bytes arrived, the Hub announced " + std::to_string(m.size)
                                     : "its " + kind + " is " + actual + ", the Hub announced " + m.etag;
    throw_runtime("the download of " + describe(ctx) + " is damaged: " + what + " (it was discarded, nothing was kept)",
                  where.string(), "run the command again; if it happens again, the server or a proxy alters the file");
  }
  fs::rename(part, blob);
}

fs::path HubClient::download_file(const fs::path& cache_dir, RepoType type, const std::string& repo_id,
                                  const std::string& revision, const std::string& filename) const {
  RequestContext ctx{type, repo_id, revision, filename};
  // A repo file name that could leave the snapshot folder is refused.
  for (const auto& part : split(filename, '/'))
    if (part.empty() || part == "." || part == "..")
      throw_runtime("refusing the repo file name '" + filename + "' (empty or '..' segments)", describe(ctx));
  RepoCache cache(cache_dir, type, repo_id);
  std::error_code ec;
  if (is_commit_hash(revision) && fs::exists(cache.pointer(revision, filename), ec))
    return cache.pointer(revision, filename);
  if (env_.offline) {
    auto commit = cache.resolve_cached(revision);
    if (commit && fs::exists(cache.pointer(*commit, filename), ec)) return cache.pointer(*commit, filename);
    throw_usage(describe(ctx) + " is not in the cache and HF_HUB_OFFLINE is set",
                commit ? cache.pointer(*commit, filename).string() : cache.ref(revision).string(),
                "unset HF_HUB_OFFLINE to download it");
  }
  FileMetadata m = file_metadata(type, repo_id, revision, filename);
  cache.write_ref(revision, m.commit);
  fs::path pointer = cache.pointer(m.commit, filename);
  if (fs::exists(pointer, ec)) return pointer;
  ensure_cachedir_tag(cache_dir);  // as huggingface_hub, once something is written into the cache
  if (!fs::exists(cache.blob(m.etag), ec)) {
    DownloadLock lock(cache.lock(m.etag));
    if (!fs::exists(cache.blob(m.etag), ec))
      fetch_checked(*this, cache.incomplete(m.etag), cache.blob(m.etag), m, ctx, cache.storage());
  }
  cache.link_pointer(m.commit, filename, m.etag);
  return pointer;
}

}  // namespace lerobot::hub
