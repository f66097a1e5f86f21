// The list of built-in policy types.
#include "lerobot/policies/register_policies.h"

#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/diffusion/configuration_diffusion.h"
#include "lerobot/policies/smolvla/configuration_smolvla.h"
#include "lerobot/policies/vqbet/configuration_vqbet.h"

namespace lerobot {
void register_policy_configs() {
  PolicyRegistry::add("act", [] { return std::make_unique<ACTConfig>(); });
  PolicyRegistry::add("diffusion", [] { return std::make_unique<DiffusionConfig>(); });
  PolicyRegistry::add("vqbet", [] { return std::make_unique<VQBeTConfig>(); });
  PolicyRegistry::add("smolvla", [] { return std::make_unique<SmolVLAConfig>(); });
}
}  // namespace lerobot
