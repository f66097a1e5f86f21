// make_policy: builds a policy from its config, dispatching on config.type() ("act", "diffusion", "vqbet", "smolvla").
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lerobot/policies/policy.h"

namespace lerobot {

struct PolicyBuildOptions {
  // Load config.pretrained_backbone_weights (a local file) into the vision backbone. Off when the
  // weights come from a checkpoint anyway (load_pretrained).
  bool load_pretrained_backbone = true;
  std::optional<torch::Device> device;  // move the policy there (default: stay on CPU)
};

using PolicyFactory = std::function<PolicyPtr(const PolicyConfig&, const PolicyBuildOptions&)>;

// Adds or replaces the factory of one policy type. Built-in types are registered on first use.
void register_policy_factory(const std::string& type, PolicyFactory factory);

// Throws a usage error for an unknown type or a config of the wrong class.
PolicyPtr make_policy(const PolicyConfig& config, const PolicyBuildOptions& options = {});

}  // namespace lerobot
