// Lets policies find the models they build on by Hub id (SmolVLA's vlm_model_name): installs the
// policies/model_folder.h resolver, which fetches such a model's files into $HF_HUB_CACHE with the
// environment's Hub settings (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE), once. lerobot-cpp calls it
// before building a policy; a robot's program on the deployment package (lerobot_cpp::inference)
// calls it once before loading such a policy (examples/robot_loop). Header-only: it joins the Hub
// client and the policies layer, which lerobot_cpp::inference links both.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lerobot/hub/hub_env.h"
#include "lerobot/hub/model_files.h"
#include "lerobot/policies/model_folder.h"

namespace lerobot {

inline void install_hub_model_resolver() {
  set_model_folder_resolver([](const std::string& name, const std::vector<std::string>& files, const std::string& flag) {
    return hub::fetch_model_files(hub::HubClient(hub::HubEnv::from_environment()), name, files, flag);
  });
}

}  // namespace lerobot
