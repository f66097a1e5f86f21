// A LeRobot pretrained_model directory: config.json + model.safetensors (+ processor files,
// see processor_io.h). Loading is strict on purpose (LeRobot only warns on missing keys).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/policies/factory.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

inline constexpr const char* kConfigFile = "config.json";
inline constexpr const char* kModelFile = "model.safetensors";

// config.json text for `config`: LeRobot's draccus layout (indent 4, "type" first), with
// input_features in dataset order. A pretrained_backbone_weights that is a local file path is
// written as null (Python would try to resolve it as a torchvision name; the weights are in
// model.safetensors anyway).
std::string policy_config_json(const PolicyConfig& config);

// Reads config.json into the registered config class of its "type" (input_feature_order taken
// from the file's key order). expected_type: refuse another type with a checkpoint error.
std::unique_ptr<PolicyConfig> load_policy_config(const fs::path& config_json,
                                                 const std::optional<std::string>& expected_type = std::nullopt);

// Writes config.json and model.safetensors (full state dict, {"format": "pt"}) into `dir`.
void save_pretrained(const Policy& policy, const fs::path& dir);

// Builds the policy `config` describes and loads dir/model.safetensors into it strictly (the
// backbone's own pretrained weights are not fetched: every weight comes from the file).
PolicyPtr load_pretrained_weights(const PolicyConfig& config, const fs::path& dir,
                                  const std::optional<torch::Device>& device = std::nullopt);

// Builds the policy from dir/config.json and loads dir/model.safetensors strictly.
PolicyPtr load_pretrained(const fs::path& dir, const std::optional<std::string>& expected_type = std::nullopt,
                          const std::optional<torch::Device>& device = std::nullopt);

}  // namespace lerobot
