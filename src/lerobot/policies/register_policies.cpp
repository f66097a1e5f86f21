// The list of built-in policy types.
#include "lerobot/policies/register_policies.h"

#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/diffusion/configuration_diffusion.h"
#include "lerobot/policies/pi0/configuration_pi0.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/smolvla/configuration_smolvla.h"
#include "lerobot/policies/vqbet/configuration_vqbet.h"

namespace lerobot {
void register_policy_configs() {
  PolicyRegistry::add("act", [] { return std::make_unique<ACTConfig>(); });
  PolicyRegistry::add("diffusion", [] { return std::make_unique<DiffusionConfig>(); });
  PolicyRegistry::add("vqbet", [] { return std::make_unique<VQBeTConfig>(); });
  PolicyRegistry::add("smolvla", [] { return std::make_unique<SmolVLAConfig>(); });
  PolicyRegistry::add("pi0", [] { return std::make_unique<PI0Config>(); });
  PolicyRegistry::add("pi05", [] { return std::make_unique<PI05Config>(); });
  // LeRobot 0.6.2's other policy types (its @PreTrainedConfig.register_subclass names).
  auto& missing = PolicyRegistry::missing();
  missing["pi0_fast"] = "π0-FAST's autoregressive action tokens are not planned yet";
  for (const char* t : {"eo1", "evo1", "fastwam", "gaussian_actor", "groot", "lingbot_va", "molmoact2",
                        "multi_task_dit", "tdmpc", "vla_jepa", "wall_x", "xvla"})
    missing[t] = "this policy type is not ported";
}
}  // namespace lerobot
