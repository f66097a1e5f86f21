// Policy factory registry; the built-in policies are listed in ensure_builtin_factories().
#include "lerobot/policies/factory.h"

#include <map>
#include <mutex>

#include "lerobot/common/error.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/pi/modeling_pi.h"
#include "lerobot/policies/smolvla/modeling_smolvla.h"
#include "lerobot/policies/vqbet/modeling_vqbet.h"

namespace lerobot {

namespace {
std::map<std::string, PolicyFactory>& factories() {
  static std::map<std::string, PolicyFactory> m;
  return m;
}

void ensure_builtin_factories() {
  static std::once_flag once;
  std::call_once(once, [] {
    factories().emplace("act", [](const PolicyConfig& c, const PolicyBuildOptions& o) -> PolicyPtr {
      const auto* act = dynamic_cast<const ACTConfig*>(&c);
      if (act == nullptr) throw_usage("config of type '" + c.type() + "' is not an ACTConfig", "policy.type");
      return std::make_shared<ACTPolicy>(*act, o.load_pretrained_backbone);
    });
    factories().emplace("diffusion", [](const PolicyConfig& c, const PolicyBuildOptions& o) -> PolicyPtr {
      const auto* diffusion = dynamic_cast<const DiffusionConfig*>(&c);
      if (diffusion == nullptr) throw_usage("config of type '" + c.type() + "' is not a DiffusionConfig", "policy.type");
      return std::make_shared<DiffusionPolicy>(*diffusion, o.load_pretrained_backbone);
    });
    factories().emplace("vqbet", [](const PolicyConfig& c, const PolicyBuildOptions& o) -> PolicyPtr {
      const auto* vqbet = dynamic_cast<const VQBeTConfig*>(&c);
      if (vqbet == nullptr) throw_usage("config of type '" + c.type() + "' is not a VQBeTConfig", "policy.type");
      return std::make_shared<VQBeTPolicy>(*vqbet, o.load_pretrained_backbone);
    });
    factories().emplace("smolvla", [](const PolicyConfig& c, const PolicyBuildOptions& o) -> PolicyPtr {
      const auto* smolvla = dynamic_cast<const SmolVLAConfig*>(&c);
      if (smolvla == nullptr) throw_usage("config of type '" + c.type() + "' is not a SmolVLAConfig", "policy.type");
      std::vector<std::string> files = smolvla_backbone_files(*smolvla, o.load_pretrained_backbone);
      return std::make_shared<SmolVLAPolicy>(
          *smolvla, resolve_model_folder(smolvla->vlm_model_name, files, "policy.vlm_model_name"),
          o.load_pretrained_backbone);
    });
    factories().emplace("pi0", [](const PolicyConfig& c, const PolicyBuildOptions&) -> PolicyPtr {
      const auto* pi0 = dynamic_cast<const PI0Config*>(&c);
      if (pi0 == nullptr) throw_usage("config of type '" + c.type() + "' is not a PI0Config", "policy.type");
      return std::make_shared<PiPolicy>(*pi0);
    });
    factories().emplace("pi05", [](const PolicyConfig& c, const PolicyBuildOptions&) -> PolicyPtr {
      const auto* pi05 = dynamic_cast<const PI05Config*>(&c);
      if (pi05 == nullptr) throw_usage("config of type '" + c.type() + "' is not a PI05Config", "policy.type");
      return std::make_shared<PiPolicy>(*pi05);
    });
  });
}
}  // namespace

void register_policy_factory(const std::string& type, PolicyFactory factory) {
  ensure_builtin_factories();
  factories()[type] = std::move(factory);
}

PolicyPtr make_policy(const PolicyConfig& config, const PolicyBuildOptions& options) {
  ensure_builtin_factories();
  auto it = factories().find(config.type());
  if (it == factories().end()) {
    std::string names;
    for (const auto& kv : factories()) names += (names.empty() ? "" : ", ") + kv.first;
    throw_usage("no policy implementation for type '" + config.type() + "'", "policy.type",
                "available: " + names);
  }
  PolicyPtr policy = it->second(config, options);
  if (options.device) policy->to(*options.device);
  return policy;
}

}  // namespace lerobot
