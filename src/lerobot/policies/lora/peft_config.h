// LeRobot 0.6.2's `--peft.*` (configs/default.py: PeftConfig) and what wrap_with_peft makes of it
// (policies/pretrained.py: _build_peft_config, _preprocess_peft_cli_overrides,
// _validate_peft_config, each policy's _get_default_peft_targets): the LoRA settings to inject.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/policies/lora/lora_linear.h"

namespace lerobot::lora {

// LeRobot's PeftConfig, field for field, with its defaults.
struct PeftConfig {
  // A string (a regular expression, or 'all-linear') or a list of module-name suffixes; null: the
  // policy's default.
  std::optional<Json> target_modules;
  std::optional<std::vector<std::string>> full_training_modules;  // PEFT's modules_to_save
  std::string method_type = "LORA";
  std::optional<std::string> init_type;  // PEFT's init_lora_weights for LORA
  int64_t r = 16;
  std::optional<int64_t> lora_alpha;  // null: PEFT's default, 8
};

// The "peft" object of a train config (null: no PEFT). Refuses unknown keys and wrong types.
std::optional<PeftConfig> peft_config_from_json(const Json& j);
Json to_json(const PeftConfig& c);

// A policy's _get_default_peft_targets as LeRobot declares it (policy type as config.json's
// "type"); nullopt for policies that declare none (ACT, Diffusion, VQ-BeT, ...).
struct PeftDefaults {
  Json target_modules;
  std::vector<std::string> modules_to_save;
};
std::optional<PeftDefaults> default_peft_targets(const std::string& policy_type, bool use_proprioceptive_memory = false);

// wrap_with_peft's config building and validation: policy defaults overridden by the non-null CLI
// fields; refuses a method other than LORA, a policy with no default targets and no
// --peft.target_modules, and PEFT without a pretrained policy (has_pretrained_path false).
LoraSettings resolve_peft(const PeftConfig& c, const std::string& policy_type, bool has_pretrained_path,
                          bool use_proprioceptive_memory = false);

// adapter_config.json as PEFT 0.18+ writes it for these settings (LoraConfig's fields and
// defaults; base_model_name_or_path and the policy class in auto_mapping as LeRobot's wrap sets
// them), and the settings read back from one (LORA only; refuses settings not implemented here).
Json adapter_config_json(const LoraSettings& s, const std::string& base_model_name_or_path,
                         const std::string& policy_class, const std::string& policy_module);
LoraSettings settings_from_adapter_config(const Json& j);

// The PeftConfig that resolve_peft turns back into `s`'s targets, modules to save, r, alpha and
// init (a new run from an adapter checkpoint trains those adapters with their own settings, as
// LeRobot's trainer does once make_policy has loaded them).
PeftConfig peft_config_from_settings(const LoraSettings& s);

}  // namespace lerobot::lora
