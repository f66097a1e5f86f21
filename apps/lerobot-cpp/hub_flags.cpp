// Hub ids in flags, resolved before the config parser sees them: --policy.path /
// --policy.pretrained_path = org/name become the local snapshot folder in $HF_HUB_CACHE, and
// --resume=true --config_path=org/name the latest checkpoint downloaded into the output dir.
#include <ctime>
#include <optional>
#include <utility>

#include "commands.h"
#include "lerobot/common/config/config.h"
#include "lerobot/hub/pretrained.h"
#include "lerobot/train/hub_checkpoint.h"

namespace lerobot::app {

namespace {

// The value of --key=V or --key V, and where it is (index of the word holding the value).
std::optional<std::pair<size_t, std::string>> flag_value(const Args& args, const std::string& key) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind(key + "=", 0) == 0) return std::make_pair(i, args[i].substr(key.size() + 1));
    if (args[i] == key && i + 1 < args.size()) return std::make_pair(i + 1, args[i + 1]);
  }
  return std::nullopt;
}

// The revision --policy.pretrained_revision names; unset (as the config parser reads it) is
// LeRobot's None: main.
std::string policy_revision(const Args& args) {
  const auto rev = flag_value(args, "--policy.pretrained_revision");
  if (!rev || rev->second.empty() || is_null_flag_value(rev->second)) return "main";
  return rev->second;
}

}  // namespace

// LeRobot's make_policy loads the weights and processors at policy.pretrained_revision; here the
// whole snapshot, config.json too, is taken at that revision, so the config and weights agree.
void resolve_hub_policy_flags(Args& args) {
  const std::string revision = policy_revision(args);
  for (const std::string key : {"--policy.path", "--policy.pretrained_path"}) {
    const auto value = flag_value(args, key);
    if (!value || !hub::looks_like_repo_id(value->second)) continue;
    hub::HubClient client(hub::HubEnv::from_environment());
    const std::string local = hub::resolve_pretrained(client, value->second, revision).string();
    std::string& word = args[value->first];
    word = word.rfind(key + "=", 0) == 0 ? key + "=" + local : local;
  }
}

void resolve_hub_resume_flags(Args& args) {
  const auto resume = flag_value(args, "--resume");
  if (!resume || !(resume->second == "true" || resume->second == "True" || resume->second == "1")) return;
  const auto config = flag_value(args, "--config_path");
  if (!config || !hub::looks_like_repo_id(config->second)) return;
  std::error_code ec;
  if (fs::exists(config->second, ec)) return;  // a local path always wins
  fs::path output_dir;
  if (const auto out = flag_value(args, "--output_dir"); out && !out->second.empty()) {
    output_dir = out->second;
  } else {  // LeRobot: a fresh local run dir, as the checkpoint's own output_dir is elsewhere
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char day[16], hms[16];
    std::strftime(day, sizeof(day), "%Y-%m-%d", &tm);
    std::strftime(hms, sizeof(hms), "%H-%M-%S", &tm);
    output_dir = fs::path("outputs/train") / day / (std::string(hms) + "_resume");
    args.push_back("--output_dir=" + output_dir.string());
  }
  // LeRobot resumes from the repo's main revision (resolve_resume_checkpoint takes none).
  hub::HubClient client(hub::HubEnv::from_environment());
  const fs::path checkpoint = fetch_hub_checkpoint(client, config->second, output_dir, "main");
  std::string& word = args[config->first];
  const std::string local = (checkpoint / "pretrained_model").string();
  word = word.rfind("--config_path=", 0) == 0 ? "--config_path=" + local : local;
}

}  // namespace lerobot::app
