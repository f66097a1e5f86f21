// The Hub's JSON API (repo info, refs), HEAD on resolve URLs, snapshots and parallel downloads.
#include "lerobot/hub/hub_client.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/hub_errors.h"

namespace lerobot::hub {
namespace {

// "https://host:port" of a URL, to send the token only to the Hub itself.
std::string origin_of(const std::string& url) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  auto slash = url.find('/', scheme + 3);
  return slash == std::string::npos ? url : url.substr(0, slash);
}

std::string api_prefix(const HubEnv& env, RepoType type, const std::string& repo_id) {
  return env.endpoint + "/api/" + repo_type_name(type) + "s/" + repo_id;
}

// ETag values come quoted, perhaps weak: W/"abc" -> abc.
std::string normalize_etag(std::string etag) {
  if (starts_with(etag, "W/")) etag = etag.substr(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

}  // namespace

HubClient::HubClient(HubEnv env, HubClientOptions options) : env_(std::move(env)), options_(options) {}

std::string HubClient::repo_url(RepoType type, const std::string& repo_id) const {
  return env_.endpoint + (type == RepoType::kDataset ? "/datasets/" : "/") + repo_id;
}

std::vector<std::string> HubClient::auth_headers(const std::string& url) const {
  if (env_.token.empty() || origin_of(url) != origin_of(env_.endpoint)) return {};
  return {"Authorization: Bearer " + env_.token};
}

HttpResponse HubClient::get_with_retries(const std::string& url, const RequestContext& ctx) const {
  return with_retries(
      options_,
      [&] {
        HttpRequest req;
        req.url = url;
        req.headers = auth_headers(url);
        return http_perform(req);
      },
      ctx, *this);
}

std::string HubClient::get_json_text(const std::string& url, RepoType type, const std::string& repo_id,
                                     const std::string& revision) const {
  RequestContext ctx{type, repo_id, revision, ""};
  HttpResponse resp = get_with_retries(url, ctx);
  if (resp.status != 200) throw_for_status(resp, ctx, *this);
  return resp.body;
}

RepoInfo HubClient::repo_info(RepoType type, const std::string& repo_id, const std::string& revision) const {
  std::string url = api_prefix(env_, type, repo_id) + "/revision/" + url_quote(revision);
  std::string text = get_json_text(url, type, repo_id, revision);
  RepoInfo info;
  try {
    Json j = Json::parse(text);
    info.commit = j.at("sha").get<std::string>();
    for (const auto& s : j.value("siblings", Json::array())) info.files.push_back(s.at("rfilename").get<std::string>());
  } catch (const std::exception& e) {
    throw_runtime(std::string("the Hub's repo info is not what was expected: ") + e.what(), url);
  }
  if (!is_commit_hash(info.commit)) throw_runtime("the Hub's repo info has no commit id", url);
  return info;
}

RepoRefs HubClient::list_refs(RepoType type, const std::string& repo_id) const {
  std::string url = api_prefix(env_, type, repo_id) + "/refs";
  std::string text = get_json_text(url, type, repo_id, "");
  RepoRefs refs;
  try {
    Json j = Json::parse(text);
    for (const auto& b : j.value("branches", Json::array()))
      refs.branches.push_back({b.at("name").get<std::string>(), b.value("targetCommit", "")});
    for (const auto& t : j.value("tags", Json::array()))
      refs.tags.push_back({t.at("name").get<std::string>(), t.value("targetCommit", "")});
  } catch (const std::exception& e) {
    throw_runtime(std::string("the Hub's refs list is not what was expected: ") + e.what(), url);
  }
  return refs;
}

FileMetadata HubClient::file_metadata(RepoType type, const std::string& repo_id, const std::string& revision,
                                      const std::string& filename) const {
  std::string url = env_.endpoint + (type == RepoType::kDataset ? "/datasets/" : "/") + repo_id + "/resolve/" +
                    url_quote(revision) + "/" + url_quote(filename, true);
  RequestContext ctx{type, repo_id, revision, filename};
  std::string current = url;
  HttpResponse resp;
  // Relative redirects (a renamed repo) are followed; an absolute one (the blob host) is where
  // the bytes are, and its headers already carry the metadata.
  for (int hop = 0; hop < 10; ++hop) {
    resp = with_retries(
        options_,
        [&] {
          HttpRequest req;
          req.method = "HEAD";
          req.url = current;
          req.follow_redirects = false;
          req.headers = auth_headers(current);
          return http_perform(req);
        },
        ctx, *this);
    std::string location = resp.header("location");
    if (resp.status >= 300 && resp.status < 400 && starts_with(location, "/") &&
        resp.header("x-repo-commit").empty()) {
      current = env_.endpoint + location;
      continue;
    }
    break;
  }
  if (resp.status >= 400) throw_for_status(resp, ctx, *this);
  FileMetadata m;
  m.commit = resp.header("x-repo-commit");
  std::string etag = resp.header("x-linked-etag");
  m.etag = normalize_etag(etag.empty() ? resp.header("etag") : etag);
  std::string size = resp.header("x-linked-size");
  if (size.empty()) size = resp.header("content-length");
  try {
    m.size = size.empty() ? 0 : std::stoull(size);
  } catch (const std::exception&) {
    throw_runtime("the Hub sent a size that is not a number ('" + size + "')", url);
  }
  std::string location = resp.header("location");
  if (resp.status >= 300 && resp.status < 400 && !location.empty())
    m.download_url = starts_with(location, "/") ? env_.endpoint + location : location;
  else
    m.download_url = current;
  if (m.commit.empty() || m.etag.empty())
    throw_runtime("the Hub's answer for " + describe(ctx) + " has no X-Repo-Commit or ETag header", url,
                  "check HF_ENDPOINT: it must be a Hugging Face Hub (a proxy may strip these headers)");
  // An etag that could escape the blobs folder is not a name we write.
  if (m.etag.find('/') != std::string::npos || m.etag == "." || m.etag == "..")
    throw_runtime("the Hub sent an ETag that is not a file name ('" + m.etag + "')", url);
  return m;
}

Snapshot HubClient::snapshot(const fs::path& cache_dir, RepoType type, const std::string& repo_id,
                             const std::string& revision,
                             const std::function<bool(const std::string&)>& wanted) const {
  RepoCache cache(cache_dir, type, repo_id);
  Snapshot snap;
  if (env_.offline) {
    auto commit = cache.resolve_cached(revision);
    if (!commit || !fs::is_directory(cache.snapshot_dir(*commit)))
      throw_usage(std::string(repo_type_name(type)) + " '" + repo_id + "' at revision '" + revision +
                      "' is not in the cache and HF_HUB_OFFLINE is set",
                  cache.storage().string(), "unset HF_HUB_OFFLINE to download it");
    snap.commit = *commit;
    snap.dir = cache.snapshot_dir(*commit);
    for (const auto& e : fs::recursive_directory_iterator(snap.dir))
      if (!e.is_directory()) snap.files.push_back(e.path().lexically_relative(snap.dir).generic_string());
    return snap;
  }
  RepoInfo info = repo_info(type, repo_id, revision);
  snap.commit = info.commit;
  snap.files = info.files;
  snap.dir = cache.snapshot_dir(info.commit);
  cache.write_ref(revision, info.commit);
  std::vector<std::string> chosen;
  for (const auto& f : info.files)
    if (!wanted || wanted(f)) chosen.push_back(f);
  download_files(cache_dir, type, repo_id, info.commit, chosen);
  fs::create_directories(snap.dir);
  return snap;
}

void HubClient::download_files(const fs::path& cache_dir, RepoType type, const std::string& repo_id,
                               const std::string& commit, const std::vector<std::string>& files) const {
  for_each_parallel(files, [&](const std::string& f) { download_file(cache_dir, type, repo_id, commit, f); });
}

void HubClient::for_each_parallel(const std::vector<std::string>& files,
                                  const std::function<void(const std::string&)>& fetch) const {
  std::atomic<size_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr first_error;
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (first_error) return;
      }
      try {
        fetch(files[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  int n = std::max(1, std::min<int>(options_.parallel, int(files.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace lerobot::hub
