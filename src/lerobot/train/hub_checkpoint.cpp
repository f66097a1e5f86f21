// Resuming from a Hub training repo (see hub_checkpoint.h).
#include "lerobot/train/hub_checkpoint.h"

#include <cctype>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"

namespace lerobot {
namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!std::isdigit(c)) return false;
  return true;
}

}  // namespace

std::optional<std::string> latest_hub_checkpoint(const std::vector<std::string>& repo_files) {
  std::optional<std::string> best;
  unsigned long long best_step = 0;
  for (const auto& f : repo_files) {
    if (!starts_with(f, "checkpoints/")) continue;
    const std::string rest = f.substr(12);
    const auto slash = rest.find('/');
    if (slash == std::string::npos) continue;  // a file directly under checkpoints/
    const std::string name = rest.substr(0, slash);
    if (!all_digits(name) || name.size() > 18) continue;
    const unsigned long long step = std::stoull(name);
    if (!best || step > best_step) {
      best = "checkpoints/" + name;
      best_step = step;
    }
  }
  return best;
}

fs::path fetch_hub_checkpoint(const hub::HubClient& client, const std::string& repo_id, const fs::path& output_dir,
                              const std::string& revision) {
  if (client.env().offline)
    throw_usage("--config_path=" + repo_id + " is a Hub repo and HF_HUB_OFFLINE is set", "--config_path",
                "unset HF_HUB_OFFLINE, or pass the local checkpoint: --config_path=<output_dir>/checkpoints/last/"
                "pretrained_model");
  const hub::RepoInfo info = client.repo_info(hub::RepoType::kModel, repo_id, revision);
  const auto latest = latest_hub_checkpoint(info.files);
  if (!latest)
    throw_usage("no checkpoint in the Hub repo '" + repo_id + "' under 'checkpoints/' (revision " + revision + ")",
                "--config_path",
                "resume from a repo the run pushed its checkpoints to (LeRobot's --save_checkpoint_to_hub=true), or "
                "pass a local checkpoint's pretrained_model directory");
  const std::string prefix = *latest + "/";
  std::vector<std::string> files;
  for (const auto& f : info.files)
    if (starts_with(f, prefix)) files.push_back(f);
  LOG_INFO << "resuming from the Hub: " << repo_id << " " << *latest << " (commit " << info.commit.substr(0, 10)
           << ", " << files.size() << " files) into " << output_dir.string();
  fs::create_directories(output_dir);
  client.download_files_to_local_dir(output_dir, hub::RepoType::kModel, repo_id, info.commit, files);
  const fs::path checkpoint = output_dir / *latest;
  // update_last_checkpoint: checkpoints/last -> <step> (relative), replaced if present.
  const fs::path last = checkpoint.parent_path() / "last";
  std::error_code ec;
  if (fs::read_symlink(last, ec) != checkpoint.filename()) {
    fs::remove(last, ec);
    fs::create_directory_symlink(checkpoint.filename(), last, ec);  // another rank may have made it
    if (fs::read_symlink(last, ec) != checkpoint.filename())
      throw_runtime("cannot point checkpoints/last at " + checkpoint.filename().string(), last.string());
  }
  return checkpoint;
}

}  // namespace lerobot
