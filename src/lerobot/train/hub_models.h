// Lets policies find the models they build on by Hub id (SmolVLA's vlm_model_name): installs
// a policies/model_folder.h resolver that fetches them with the environment's Hub settings.
// train, eval and infer call it before building a policy.
#pragma once

namespace lerobot {

void install_hub_model_resolver();

}  // namespace lerobot
