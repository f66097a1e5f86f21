// The list of built-in policy types.
#include "lerobot/policies/register_policies.h"

#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/diffusion/configuration_diffusion.h"

namespace lerobot {
void register_policy_configs() {
  PolicyRegistry::add("act", [] { return std::make_unique<ACTConfig>(); });
  PolicyRegistry::add("diffusion", [] { return std::make_unique<DiffusionConfig>(); });
}
}  // namespace lerobot
