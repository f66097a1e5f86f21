// Fetching a model's files by Hub id (see model_files.h).
#include "lerobot/hub/model_files.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

bool matches(const std::string& file, const std::string& pattern) {
  if (pattern.size() > 1 && pattern[0] == '*') {
    const std::string tail = pattern.substr(1);
    return file.size() >= tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0 &&
           file.find('/') == std::string::npos;
  }
  return file == pattern;
}

}  // namespace

fs::path fetch_model_files(const HubClient& client, const std::string& repo_id, const std::vector<std::string>& patterns,
                           const std::string& flag) {
  const fs::path cache = client.env().hub_cache;
  const RepoCache repo(cache, RepoType::kModel, repo_id);
  try {
    Snapshot snap = client.snapshot(cache, RepoType::kModel, repo_id, "main", [&](const std::string& f) {
      for (const auto& p : patterns)
        if (matches(f, p)) return true;
      return false;
    });
    for (const auto& p : patterns)
      if (p.find('*') == std::string::npos && !fs::exists(snap.dir / p))
        throw_usage("the Hub model " + repo_id + " has no " + p, "--" + flag,
                    "name a model with these files: " + join(patterns, ", "));
    LOG_INFO << "model " << repo_id << ": " << snap.dir.string();
    return snap.dir;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage && e.kind() != ErrorKind::kRuntime) throw;
    throw_usage(repo_id + " is needed (" + join(patterns, ", ") + ") and could not be fetched: " + e.problem(), "--" + flag,
                "unset HF_HUB_OFFLINE and run once with network to cache it under " +
                    repo.snapshot_dir("<commit>").string() + ", or pass a local folder with those files");
  }
}

}  // namespace lerobot::hub
