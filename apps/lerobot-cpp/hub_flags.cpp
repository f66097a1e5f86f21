// Hub ids in policy flags: --policy.path / --policy.pretrained_path = org/name become the local
// snapshot folder in $HF_HUB_CACHE before the config parser sees them.
#include "commands.h"
#include "lerobot/hub/pretrained.h"

namespace lerobot::app {

void resolve_hub_policy_flags(Args& args) {
  std::string revision = "main";
  for (const auto& a : args)
    if (a.rfind("--policy.revision=", 0) == 0) revision = a.substr(18);
  for (size_t i = 0; i < args.size(); ++i) {
    for (const std::string key : {"--policy.path", "--policy.pretrained_path"}) {
      std::string* value = nullptr;
      if (args[i].rfind(key + "=", 0) == 0) {
        std::string v = args[i].substr(key.size() + 1);
        if (!hub::looks_like_repo_id(v)) continue;
        hub::HubClient client(hub::HubEnv::from_environment());
        args[i] = key + "=" + hub::resolve_pretrained(client, v, revision).string();
      } else if (args[i] == key && i + 1 < args.size()) {
        value = &args[i + 1];
        if (!hub::looks_like_repo_id(*value)) continue;
        hub::HubClient client(hub::HubEnv::from_environment());
        *value = hub::resolve_pretrained(client, *value, revision).string();
      }
    }
  }
}

}  // namespace lerobot::app
