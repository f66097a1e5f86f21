// Uploads as huggingface_hub makes them without hf_xet (hf_api.py create_repo / create_commit /
// preupload_lfs_files, _commit_api.py, lfs.py): whoami-v2, repos/create, preupload (the Hub
// decides regular vs LFS and says which files it already has), the LFS batch API (basic PUT or
// multipart, then verify), and the NDJSON commit with parentCommit. The token goes only to the
// Hub's own origin (never to the storage host an LFS upload is sent to) and is never printed.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/hashing.h"
#include "lerobot/hub/hub_client.h"
#include "lerobot/hub/hub_errors.h"

namespace lerobot::hub {
namespace {

const char* kLfsContentType = "application/vnd.git-lfs+json";

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == in.size()) {
    const uint32_t v = uint8_t(in[i]) << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

std::string read_bytes(const fs::path& p, size_t max = std::string::npos) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw_runtime("cannot read the file to upload", p.string());
  std::string s;
  if (max == std::string::npos) {
    s.assign(std::istreambuf_iterator<char>(in), {});
  } else {
    s.resize(max);
    in.read(&s[0], std::streamsize(max));
    s.resize(size_t(in.gcount()));
  }
  return s;
}

// lfs.py fix_hf_endpoint_in_url: an href on huggingface.co goes to HF_ENDPOINT instead.
std::string fix_endpoint(const std::string& url, const std::string& endpoint) {
  const std::string hub = "https://huggingface.co";
  if (endpoint != hub && starts_with(url, hub)) return endpoint + url.substr(hub.size());
  return url;
}

struct Pending {
  UploadFile file;
  uint64_t size = 0;
  std::string sha256;  // LFS files only
  std::string mode;    // "regular" or "lfs"
  bool ignore = false;
  std::string remote_oid;
};

}  // namespace

// The Error for a non-2xx answer to an upload request, in the words of writing (read errors
// are in hub_errors.cpp).
[[noreturn]] static void throw_upload_status(const HttpResponse& resp, const std::string& what,
                                             const std::string& repo_id, const HubClient& client) {
  const std::string url = client.repo_url(RepoType::kModel, repo_id);
  const std::string tokens = client.env().endpoint + "/settings/tokens";
  const std::string body = redact(resp.body.substr(0, 300), client.env().token);
  const std::string detail = body.empty() ? "" : " (" + body + ")";
  if (resp.status == 401)
    throw_usage(what + ": the Hub answered 401 Unauthorized: the token was refused" + detail, "HF_TOKEN",
                "create a token with write access at " + tokens +
                    " and set HF_TOKEN to it or run `hf auth login` (it writes " + client.env().token_path.string() + ")");
  if (resp.status == 403)
    throw_usage(what + ": the Hub answered 403 Forbidden: this token may not write to '" + repo_id + "'" + detail, url,
                "use a token with write access to the namespace '" + repo_id.substr(0, repo_id.find('/')) +
                    "', or choose a repo id in your own namespace (--policy.repo_id=<your user name>/<model name>)");
  if (resp.status == 404)
    throw_usage(what + ": the Hub answered 404 (repository or revision not found)" + detail, url,
                "check --policy.repo_id; the repository is created first, so a 404 here means the token cannot see it");
  if (resp.status == 412)
    throw_runtime(what + ": the Hub answered 412: the branch moved while uploading (another commit came first)" + detail,
                  url, "run the upload again; nothing was overwritten");
  throw_runtime(what + ": the Hub answered HTTP " + std::to_string(resp.status) + detail, url,
                "try again later (the files are in the checkpoint folder and can be uploaded with `hf upload`)");
}

WhoAmI HubClient::whoami() const {
  const std::string url = env_.endpoint + "/api/whoami-v2";
  RequestContext ctx{RepoType::kModel, "", "", ""};
  if (env_.token.empty())
    throw_usage("no Hugging Face token: set HF_TOKEN or run `hf auth login` (it writes " + env_.token_path.string() + ")",
                "HF_TOKEN", "create a token with write access at " + env_.endpoint + "/settings/tokens");
  HttpResponse resp = get_with_retries(url, ctx);
  if (resp.status == 401)
    throw_usage("the Hub refused the token (whoami answered 401 Unauthorized): it is invalid, expired or revoked",
                "HF_TOKEN",
                "create a token with write access at " + env_.endpoint + "/settings/tokens and set HF_TOKEN to it or run "
                "`hf auth login` (the token now comes from " +
                    std::string(std::getenv("HF_TOKEN") ? "HF_TOKEN" : env_.token_path.string()) + ")");
  if (resp.status != 200) throw_upload_status(resp, "whoami", "", *this);
  WhoAmI who;
  try {
    const Json j = Json::parse(resp.body);
    who.name = j.at("name").get<std::string>();
    for (const auto& o : j.value("orgs", Json::array()))
      who.orgs.push_back({o.value("name", ""), o.value("roleInOrg", "")});
    if (j.contains("auth") && j["auth"].contains("accessToken"))
      who.token_role = j["auth"]["accessToken"].value("role", "");
  } catch (const std::exception& e) {
    throw_runtime(std::string("the Hub's whoami answer is not what was expected: ") + e.what(), url);
  }
  return who;
}

std::string HubClient::create_repo(RepoType type, const std::string& repo_id, std::optional<bool> private_,
                                   bool exist_ok) const {
  const std::string url = env_.endpoint + "/api/repos/create";
  const auto slash = repo_id.find('/');
  Json payload{{"name", slash == std::string::npos ? repo_id : repo_id.substr(slash + 1)},
               {"organization", slash == std::string::npos ? Json(nullptr) : Json(repo_id.substr(0, slash))},
               {"type", repo_type_name(type)}};
  if (private_) payload["visibility"] = *private_ ? "private" : "public";
  RequestContext ctx{type, repo_id, "", ""};
  HttpResponse resp = with_retries(
      options_,
      [&] {
        HttpRequest req;
        req.method = "POST";
        req.url = url;
        req.headers = auth_headers(url);
        req.headers.push_back("Content-Type: application/json");
        req.body = payload.dump();
        return http_perform(req);
      },
      ctx, *this);
  if (resp.status == 409 && exist_ok) return repo_url(type, repo_id);
  if (resp.status != 200 && resp.status != 201) throw_upload_status(resp, "creating the repo '" + repo_id + "'", repo_id, *this);
  try {
    return Json::parse(resp.body).value("url", repo_url(type, repo_id));
  } catch (const std::exception&) {
    return repo_url(type, repo_id);
  }
}

void HubClient::create_tag(RepoType type, const std::string& repo_id, const std::string& tag,
                           const std::string& revision, bool exist_ok) const {
  const std::string url = env_.endpoint + "/api/" + repo_type_name(type) + "s/" + repo_id + "/tag/" + url_quote(revision);
  RequestContext ctx{type, repo_id, revision, ""};
  HttpResponse resp = with_retries(
      options_,
      [&] {
        HttpRequest req;
        req.method = "POST";
        req.url = url;
        req.headers = auth_headers(url);
        req.headers.push_back("Content-Type: application/json");
        req.body = Json{{"tag", tag}}.dump();
        return http_perform(req);
      },
      ctx, *this);
  if (resp.status == 409 && exist_ok) return;
  if (resp.status != 200 && resp.status != 201) throw_upload_status(resp, "tagging '" + tag + "'", repo_id, *this);
}

CommitResult HubClient::upload_files(RepoType type, const std::string& repo_id, const std::vector<UploadFile>& files,
                                     const std::string& commit_message, const std::string& revision,
                                     const std::string& commit_description) const {
  const std::string api = env_.endpoint + "/api/" + repo_type_name(type) + "s/" + repo_id;
  const std::string repo_prefix = env_.endpoint + (type == RepoType::kDataset ? "/datasets/" : "/") + repo_id;
  RequestContext ctx{type, repo_id, revision, ""};
  auto post_json = [&](const std::string& url, const std::string& body, const std::string& content_type, bool retry) {
    auto attempt = [&] {
      HttpRequest req;
      req.method = "POST";
      req.url = url;
      req.headers = auth_headers(url);
      req.headers.push_back("Content-Type: " + content_type);
      if (content_type == kLfsContentType) req.headers.push_back(std::string("Accept: ") + kLfsContentType);
      req.body = body;
      return http_perform(req);
    };
    if (retry) return with_retries(options_, attempt, ctx, *this);
    try {
      return attempt();
    } catch (const TransportError& e) {
      throw_unreachable(e.message, ctx, *this);
    }
  };
  auto parse = [&](const HttpResponse& r, const std::string& what) {
    try {
      return Json::parse(r.body);
    } catch (const std::exception& e) {
      throw_runtime("the Hub's answer to " + what + " is not JSON: " + e.what(), repo_prefix);
    }
  };

  CommitResult result;
  // 1. The branch head the commit goes on (an empty repo has none).
  {
    const std::string url = api + "/revision/" + url_quote(revision);
    HttpResponse r = get_with_retries(url, ctx);
    if (r.status == 200) {
      result.parent = parse(r, "repo info").value("sha", "");
    } else if (!(r.status == 404 && r.header("x-error-code") == "RevisionNotFound")) {
      throw_upload_status(r, "reading the head of '" + revision + "'", repo_id, *this);
    }
  }

  // 2. Pre-upload: the Hub says, per file, regular or LFS, ignored or not, and its current oid.
  std::vector<Pending> pending;
  for (const auto& f : files) {
    Pending p;
    p.file = f;
    std::error_code ec;
    p.size = fs::file_size(f.local, ec);
    if (ec) throw_runtime("cannot read the file to upload", f.local.string());
    pending.push_back(std::move(p));
  }
  for (size_t start = 0; start < pending.size(); start += 256) {
    Json list = Json::array();
    for (size_t i = start; i < std::min(pending.size(), start + 256); ++i)
      list.push_back({{"path", pending[i].file.path_in_repo},
                      {"sample", base64(read_bytes(pending[i].file.local, 512))},
                      {"size", pending[i].size}});
    HttpResponse r = post_json(api + "/preupload/" + url_quote(revision), Json{{"files", list}}.dump(),
                               "application/json", true);
    if (r.status != 200) throw_upload_status(r, "pre-upload", repo_id, *this);
    const Json j = parse(r, "pre-upload");
    for (const auto& f : j.value("files", Json::array())) {
      const std::string path = f.value("path", "");
      for (auto& p : pending)
        if (p.file.path_in_repo == path) {
          p.mode = f.value("uploadMode", "");
          p.ignore = f.value("shouldIgnore", false);
          if (f.contains("oid") && f["oid"].is_string()) p.remote_oid = f["oid"].get<std::string>();
        }
    }
  }
  for (auto& p : pending) {
    if (p.mode != "lfs" && p.mode != "regular")
      throw_runtime("the Hub's pre-upload answer has no upload mode for '" + p.file.path_in_repo + "'", repo_prefix);
    if (p.size == 0) p.mode = "regular";  // empty files cannot go through LFS
    if (p.mode == "lfs") p.sha256 = sha256_file(p.file.local);
  }

  // 3. LFS: batch, then a PUT (or the parts of a multipart upload) and verify per object.
  std::vector<Pending*> lfs;
  for (auto& p : pending)
    if (p.mode == "lfs" && !p.ignore && p.remote_oid != p.sha256) lfs.push_back(&p);
  if (!lfs.empty()) {
    Json objects = Json::array();
    for (const auto* p : lfs) objects.push_back({{"oid", p->sha256}, {"size", p->size}});
    Json payload{{"operation", "upload"},
                 {"transfers", {"basic", "multipart"}},
                 {"objects", objects},
                 {"hash_algo", "sha256"},
                 {"ref", {{"name", revision}}}};
    HttpResponse r = post_json(repo_prefix + ".git/info/lfs/objects/batch", payload.dump(), kLfsContentType, true);
    if (r.status != 200) throw_upload_status(r, "the LFS batch request", repo_id, *this);
    const Json answer = parse(r, "the LFS batch request");
    for (const auto& obj : answer.value("objects", Json::array())) {
      const std::string oid = obj.value("oid", "");
      Pending* p = nullptr;
      for (auto* q : lfs)
        if (q->sha256 == oid) p = q;
      if (!p) continue;
      if (obj.contains("error"))
        throw_runtime("the Hub refused the LFS upload of '" + p->file.path_in_repo + "': " +
                          obj["error"].value("message", obj["error"].dump()),
                      repo_prefix);
      if (!obj.contains("actions") || obj["actions"].is_null()) {
        result.lfs_already.push_back(p->file.path_in_repo);  // the Hub already stores these bytes
        continue;
      }
      const Json& upload = obj["actions"].at("upload");
      const std::string href = fix_endpoint(upload.at("href").get<std::string>(), env_.endpoint);
      const Json header = upload.value("header", Json::object());
      LOG_INFO << "hub: uploading " << p->file.path_in_repo << " (" << p->size << " bytes, LFS)";
      auto put = [&](const std::string& url, uint64_t offset, uint64_t length) {
        HttpResponse pr = with_retries(
            options_,
            [&] {
              HttpRequest req;
              req.method = "PUT";
              req.url = url;
              req.headers = auth_headers(url);  // empty unless the storage host is the Hub itself
              req.upload_from = p->file.local;
              req.upload_offset = offset;
              req.upload_length = length;
              req.low_speed_timeout_s = 120;
              return http_perform(req);
            },
            ctx, *this);
        if (pr.status < 200 || pr.status >= 300)
          throw_upload_status(pr, "uploading '" + p->file.path_in_repo + "'", repo_id, *this);
        return pr;
      };
      if (header.contains("chunk_size")) {
        // Multipart: header "1".."N" are the part URLs; then POST the parts' ETags to href.
        uint64_t chunk = 0;
        try {
          chunk = header["chunk_size"].is_string() ? std::stoull(header["chunk_size"].get<std::string>())
                                                   : header["chunk_size"].get<uint64_t>();
        } catch (const std::exception&) {
        }
        std::vector<std::pair<int, std::string>> parts;
        for (auto it = header.begin(); it != header.end(); ++it) {
          const std::string k = it.key();
          if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos && it->is_string())
            parts.emplace_back(std::stoi(k), it->get<std::string>());
        }
        std::sort(parts.begin(), parts.end());
        if (chunk == 0 || parts.size() != (p->size + chunk - 1) / chunk)
          throw_runtime("the Hub's multipart upload instructions for '" + p->file.path_in_repo + "' do not fit its size",
                        repo_prefix);
        Json done = Json::array();
        for (size_t k = 0; k < parts.size(); ++k) {
          const uint64_t off = k * chunk;
          HttpResponse pr = put(parts[k].second, off, std::min<uint64_t>(chunk, p->size - off));
          const std::string etag = pr.header("etag");
          if (etag.empty()) throw_runtime("the storage host sent no ETag for part " + std::to_string(k + 1), repo_prefix);
          done.push_back({{"partNumber", int(k + 1)}, {"etag", etag}});
        }
        HttpResponse cr = post_json(href, Json{{"oid", p->sha256}, {"parts", done}}.dump(), kLfsContentType, true);
        if (cr.status < 200 || cr.status >= 300)
          throw_upload_status(cr, "completing the upload of '" + p->file.path_in_repo + "'", repo_id, *this);
      } else {
        put(href, 0, p->size);
      }
      if (obj["actions"].contains("verify")) {
        const std::string verify = fix_endpoint(obj["actions"]["verify"].at("href").get<std::string>(), env_.endpoint);
        HttpResponse vr = post_json(verify, Json{{"oid", p->sha256}, {"size", p->size}}.dump(), kLfsContentType, true);
        if (vr.status < 200 || vr.status >= 300)
          throw_upload_status(vr, "verifying the upload of '" + p->file.path_in_repo + "'", repo_id, *this);
      }
      result.lfs_files.push_back(p->file.path_in_repo);
    }
    for (const auto* p : lfs)
      if (std::find(result.lfs_files.begin(), result.lfs_files.end(), p->file.path_in_repo) == result.lfs_files.end() &&
          std::find(result.lfs_already.begin(), result.lfs_already.end(), p->file.path_in_repo) == result.lfs_already.end())
        throw_runtime("the Hub's LFS batch answer leaves out '" + p->file.path_in_repo + "'", repo_prefix);
  }

  // 4. The commit: files whose oid the branch already has are left out.
  std::string ndjson;
  Json head{{"summary", commit_message}, {"description", commit_description}};
  if (!result.parent.empty()) head["parentCommit"] = result.parent;
  ndjson += Json{{"key", "header"}, {"value", head}}.dump() + "\n";
  size_t ops = 0;
  for (const auto& p : pending) {
    if (p.ignore) continue;
    const std::string local_oid = p.mode == "lfs" ? p.sha256 : git_blob_sha1_file(p.file.local);
    if (!p.remote_oid.empty() && p.remote_oid == local_oid) {
      result.unchanged_files.push_back(p.file.path_in_repo);
      continue;
    }
    ++ops;
    if (p.mode == "lfs") {
      ndjson += Json{{"key", "lfsFile"},
                     {"value", {{"path", p.file.path_in_repo}, {"algo", "sha256"}, {"oid", p.sha256}, {"size", p.size}}}}
                    .dump() +
                "\n";
    } else {
      result.regular_files.push_back(p.file.path_in_repo);
      ndjson += Json{{"key", "file"},
                     {"value", {{"content", base64(read_bytes(p.file.local))}, {"path", p.file.path_in_repo}, {"encoding", "base64"}}}}
                    .dump() +
                "\n";
    }
  }
  if (ops == 0) {
    LOG_WARNING << "hub: no file of " << repo_id << " changed since its last commit; no commit made";
    return result;
  }
  HttpResponse r = post_json(api + "/commit/" + url_quote(revision), ndjson, "application/x-ndjson", false);
  if (r.status != 200 && r.status != 201) throw_upload_status(r, "the commit", repo_id, *this);
  const Json j = parse(r, "the commit");
  result.commit = j.value("commitOid", "");
  result.commit_url = j.value("commitUrl", "");
  if (!is_commit_hash(result.commit)) throw_runtime("the Hub's commit answer has no commit id", api + "/commit");
  return result;
}

}  // namespace lerobot::hub
