// Dataset by Hub id (see hub_dataset.h): revision choice, meta/ snapshot, then episode files.
#include "lerobot/train/hub_dataset.h"

#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/hub/dataset_revision.h"
#include "lerobot/hub/pretrained.h"

namespace lerobot {
namespace {

// Branch and tag names: from the Hub, or offline from the cache's refs/ (what was resolved before).
std::vector<std::string> known_refs(const hub::HubClient& client, const std::string& repo_id) {
  std::vector<std::string> names;
  if (client.env().offline) {
    hub::RepoCache cache(client.env().lerobot_hub_cache(), hub::RepoType::kDataset, repo_id);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache.storage() / "refs", ec))
      if (e.is_regular_file()) names.push_back(e.path().filename().string());
    return names;
  }
  hub::RepoRefs refs = client.list_refs(hub::RepoType::kDataset, repo_id);
  for (const auto& r : refs.branches) names.push_back(r.name);
  for (const auto& r : refs.tags) names.push_back(r.name);
  return names;
}

}  // namespace

bool dataset_needs_download(const DatasetConfig& cfg) {
  if (cfg.repo_id.empty()) return false;
  if (!cfg.root) return true;  // the Hub client names a malformed id
  if (!hub::looks_like_repo_id(cfg.repo_id)) return false;
  std::error_code ec;
  return !fs::exists(fs::path(*cfg.root) / "meta" / "info.json", ec);
}

fs::path resolve_hub_dataset(const DatasetConfig& cfg, const hub::HubClient& client) {
  const std::string& id = cfg.repo_id;
  // --dataset.root: snapshot_download(local_dir=root), files at root/<path> (LeRobot 0.6).
  const std::optional<fs::path> local_dir = cfg.root ? std::optional<fs::path>(*cfg.root) : std::nullopt;
  std::error_code ec;
  if (!local_dir) {
    const fs::path local = client.env().lerobot_home / id;
    if (fs::exists(local / "meta" / "info.json", ec)) {
      LOG_INFO << "dataset " << id << ": using the local copy in " << local.string();
      return local;
    }
  }
  const std::string requested = cfg.revision.value_or("v3.0");
  std::string revision = requested;
  if (hub::parse_version(requested) && !(local_dir && client.env().offline)) {
    hub::ChosenRevision chosen = hub::choose_dataset_revision(id, requested, known_refs(client, id));
    if (!chosen.note.empty()) LOG_WARNING << chosen.note;
    revision = chosen.revision;
  }
  const fs::path cache = client.env().lerobot_hub_cache();
  auto is_meta = [](const std::string& f) { return starts_with(f, "meta/"); };
  hub::Snapshot snap = local_dir ? client.snapshot_to_local_dir(*local_dir, hub::RepoType::kDataset, id, revision, is_meta)
                                 : client.snapshot(cache, hub::RepoType::kDataset, id, revision, is_meta);
  if (local_dir && !fs::exists(*local_dir / "meta" / "info.json", ec))
    throw_usage("dataset '" + id + "' has no meta/info.json at revision '" + revision + "'", local_dir->string(),
                "check --dataset.repo_id and --dataset.revision (a LeRobot v3.0 or v2.1 dataset repo)");
  const DatasetMetadata meta = load_dataset_metadata(snap.dir);
  // Only the files the selected episodes live in.
  std::set<int64_t> excluded;
  if (cfg.exclude_episodes) excluded.insert(cfg.exclude_episodes->begin(), cfg.exclude_episodes->end());
  std::vector<int64_t> episodes;
  if (cfg.episodes) {
    episodes = *cfg.episodes;
  } else {
    for (const auto& ep : meta.episodes) episodes.push_back(ep.episode_index);
  }
  std::set<std::string> files;
  for (int64_t e : episodes) {
    if (excluded.count(e)) continue;
    const EpisodeInfo& ep = meta.episode(e);  // names the episode when out of range
    files.insert(ep.data_file.generic_string());
    for (const auto& [key, video] : ep.videos) files.insert(video.file.generic_string());
  }
  std::vector<std::string> list(files.begin(), files.end());
  if (local_dir && !client.env().offline) {
    client.download_files_to_local_dir(*local_dir, hub::RepoType::kDataset, id, snap.commit, list);
  } else if (client.env().offline) {
    for (const auto& f : list)
      if (!fs::exists(snap.dir / f, ec))
        throw_usage("dataset '" + id + "' file " + f + " is not in the cache and HF_HUB_OFFLINE is set",
                    (snap.dir / f).string(), "unset HF_HUB_OFFLINE to download it");
  } else {
    client.download_files(cache, hub::RepoType::kDataset, id, snap.commit, list);
  }
  LOG_INFO << "dataset " << id << " (revision " << revision
           << (snap.commit.empty() ? std::string() : ", commit " + snap.commit.substr(0, 10)) << ", "
           << meta.codebase_version << "): " << list.size() << " data/video files for " << episodes.size()
           << " episodes in " << snap.dir.string();
  return snap.dir;
}

}  // namespace lerobot
