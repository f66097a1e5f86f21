// An adapter folder as PEFT's PeftModel.save_pretrained writes it (and LeRobot's checkpoints hold
// beside config.json when use_peft): adapter_config.json and adapter_model.safetensors, keys
// `base_model.model.<module>.lora_A.weight` etc.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "lerobot/policies/lora/lora_linear.h"

namespace lerobot::lora {

// `weights`: the policy's state dict as gathered elsewhere (a sharded run's, whose module tensors
// are released between steps), read by parameter name instead of the modules; null: the modules'.
void save_adapter_folder(const std::filesystem::path& dir, torch::nn::Module& policy, const LoraSettings& s,
                         const std::string& base_model_name_or_path, const std::string& policy_class,
                         const std::string& policy_module,
                         const std::map<std::string, torch::Tensor>* weights = nullptr);

// Reads adapter_config.json, injects adapters into `policy` as it says, loads
// adapter_model.safetensors into them and freezes the rest; returns the settings.
LoraSettings load_adapter_folder(const std::filesystem::path& dir, torch::nn::Module& policy);

// adapter_config.json's base_model_name_or_path when `dir` holds an adapter folder, else nullopt.
std::optional<std::string> adapter_base(const std::filesystem::path& dir);

}  // namespace lerobot::lora
