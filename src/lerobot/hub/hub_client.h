// HubClient: the Hub's HTTP API as huggingface_hub uses it (repo info, refs, resolve + download)
// writing huggingface_hub's cache layout (cache_layout.h). Retries with back-off, resumable
// downloads checked by size and sha256/git-sha1 before they enter the cache, offline mode.
// Uploads (whoami, create repo, pre-upload, LFS, commit) are in hub_upload.cpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/hub/cache_layout.h"
#include "lerobot/hub/hub_env.h"

namespace lerobot::hub {

struct HttpResponse;
struct RequestContext;

struct HubClientOptions {
  int max_retries = 5;            // attempts after the first, for 429/5xx and broken connections
  double backoff_initial_s = 1.0; // doubled each retry ...
  double backoff_max_s = 8.0;     // ... up to this
  int parallel = 8;               // files downloaded at once by download_files
  bool progress = true;           // progress lines on stderr
};

struct RepoInfo {
  std::string commit;              // "sha"
  std::vector<std::string> files;  // "siblings"[].rfilename
};

struct RepoRefs {
  struct Ref {
    std::string name;    // "v3.0", "main"
    std::string commit;  // "targetCommit"
  };
  std::vector<Ref> branches, tags;
};

// What a HEAD on resolve/<revision>/<file> says (huggingface_hub's HfFileMetadata).
struct FileMetadata {
  std::string commit;        // X-Repo-Commit
  std::string etag;          // X-Linked-Etag, else ETag; quotes and W/ removed
  uint64_t size = 0;         // X-Linked-Size, else Content-Length
  std::string download_url;  // Location of a redirect, else the resolve URL
};

struct Snapshot {
  fs::path dir;        // <cache>/<type>s--org--name/snapshots/<commit>
  std::string commit;
  std::vector<std::string> files;  // repo files (all of them, not only the ones fetched)
};

// GET /api/whoami-v2: who the token belongs to and what it may do.
struct WhoAmI {
  std::string name;  // the user (or organization, for an org token)
  struct Org {
    std::string name;
    std::string role;  // "admin", "write", "contributor", "read" ("" when not sent)
  };
  std::vector<Org> orgs;
  std::string token_role;  // auth.accessToken.role: "read", "write", "fineGrained" ("" when not sent)
};

// One file of a commit.
struct UploadFile {
  std::string path_in_repo;  // "config.json", "checkpoints/000100/pretrained_model/config.json"
  fs::path local;
};

// What upload_files did (huggingface_hub's CommitInfo plus what went where).
struct CommitResult {
  std::string commit;      // the new commit id ("" when nothing changed and no commit was made)
  std::string commit_url;  // as the Hub sends it
  std::string parent;      // the branch head the commit was made on
  std::vector<std::string> lfs_files;        // uploaded through the LFS batch API (sha256 oid)
  std::vector<std::string> lfs_already;      // LFS files whose bytes the Hub already had (no PUT)
  std::vector<std::string> regular_files;    // sent inline (base64) in the commit
  std::vector<std::string> unchanged_files;  // same oid as on the branch: left out of the commit
};

class HubClient {
 public:
  explicit HubClient(HubEnv env, HubClientOptions options = {});
  const HubEnv& env() const { return env_; }
  const HubClientOptions& options() const { return options_; }

  // GET /api/<type>s/<id>/revision/<revision>.
  RepoInfo repo_info(RepoType type, const std::string& repo_id, const std::string& revision) const;
  // GET /api/<type>s/<id>/refs.
  RepoRefs list_refs(RepoType type, const std::string& repo_id) const;
  // HEAD <endpoint>/[datasets/]<id>/resolve/<revision>/<file>, relative redirects followed.
  FileMetadata file_metadata(RepoType type, const std::string& repo_id, const std::string& revision,
                             const std::string& filename) const;

  // hf_hub_download(cache_dir=...): snapshots/<commit>/<filename>, downloaded if needed. A commit
  // revision whose file is in the cache costs no request; offline mode only reads the cache.
  fs::path download_file(const fs::path& cache_dir, RepoType type, const std::string& repo_id,
                         const std::string& revision, const std::string& filename) const;

  // snapshot_download(cache_dir=..., allow_patterns as a predicate): the snapshot folder with
  // every repo file that `wanted` accepts. refs/<revision> is written for a branch or tag.
  Snapshot snapshot(const fs::path& cache_dir, RepoType type, const std::string& repo_id,
                    const std::string& revision,
                    const std::function<bool(const std::string&)>& wanted) const;

  // Downloads `files` of the commit into the cache, `options().parallel` at a time.
  void download_files(const fs::path& cache_dir, RepoType type, const std::string& repo_id,
                      const std::string& commit, const std::vector<std::string>& files) const;

  // hf_hub_download(local_dir=...): the file at local_dir/<filename> itself (no cache, no links),
  // with huggingface_hub's bookkeeping in local_dir/.cache/huggingface/download/<filename>.metadata
  // (commit, etag, time). A file whose metadata names the commit (or, after a HEAD, the etag)
  // is not downloaded again; offline, a file that is there is used as it is.
  fs::path download_to_local_dir(const fs::path& local_dir, RepoType type, const std::string& repo_id,
                                 const std::string& revision, const std::string& filename) const;

  // snapshot_download(local_dir=...): every repo file that `wanted` accepts, under local_dir.
  Snapshot snapshot_to_local_dir(const fs::path& local_dir, RepoType type, const std::string& repo_id,
                                 const std::string& revision,
                                 const std::function<bool(const std::string&)>& wanted) const;

  // Downloads `files` of the commit into local_dir, `options().parallel` at a time.
  void download_files_to_local_dir(const fs::path& local_dir, RepoType type, const std::string& repo_id,
                                   const std::string& commit, const std::vector<std::string>& files) const;

  // GET /api/whoami-v2 with the token. 401 (no or a refused token) is a usage error naming
  // HF_TOKEN and `hf auth login`.
  WhoAmI whoami() const;

  // POST /api/repos/create {name, organization, type, visibility}; an existing repo (409) is
  // fine when exist_ok. private_: nullopt leaves the Hub's default (public unless the org's
  // default is private). Returns the repo's URL.
  std::string create_repo(RepoType type, const std::string& repo_id, std::optional<bool> private_,
                          bool exist_ok = true) const;

  // create_commit as huggingface_hub does it without hf_xet: pre-upload (the Hub says which files
  // are LFS and which it already has), the LFS batch API (PUT, or multipart, then verify) for
  // the LFS ones, then one NDJSON commit on `revision` with parentCommit = the head read first
  // (a commit made in between is refused by the Hub, not overwritten). Files whose oid equals
  // the branch's are left out; with nothing left no commit is made (result.commit empty).
  CommitResult upload_files(RepoType type, const std::string& repo_id, const std::vector<UploadFile>& files,
                            const std::string& commit_message, const std::string& revision = "main",
                            const std::string& commit_description = "") const;

  // POST /api/<type>s/<id>/tag/<revision> {tag}: a tag on a commit (exist_ok: a 409 is fine).
  void create_tag(RepoType type, const std::string& repo_id, const std::string& tag, const std::string& revision,
                  bool exist_ok = true) const;

  // "<endpoint>/datasets/<id>" or "<endpoint>/<id>": where a user sees the repo.
  std::string repo_url(RepoType type, const std::string& repo_id) const;

 private:
  // GET url with the token (for the Hub's own origin), retried with back-off; any status returns.
  HttpResponse get_with_retries(const std::string& url, const RequestContext& ctx) const;
  std::string get_json_text(const std::string& url, RepoType type, const std::string& repo_id,
                            const std::string& revision) const;
  std::vector<std::string> auth_headers(const std::string& url) const;
  // Runs fetch(file) for every file, options().parallel at a time; the first error is rethrown.
  void for_each_parallel(const std::vector<std::string>& files,
                         const std::function<void(const std::string&)>& fetch) const;
  HubEnv env_;
  HubClientOptions options_;
};

}  // namespace lerobot::hub
