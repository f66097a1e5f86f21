// The Hub model resolver (see hub_models.h).
#include "lerobot/train/hub_models.h"

#include "lerobot/hub/hub_env.h"
#include "lerobot/hub/model_files.h"
#include "lerobot/policies/model_folder.h"

namespace lerobot {

void install_hub_model_resolver() {
  set_model_folder_resolver([](const std::string& name, const std::vector<std::string>& files, const std::string& flag) {
    return hub::fetch_model_files(hub::HubClient(hub::HubEnv::from_environment()), name, files, flag);
  });
}

}  // namespace lerobot
