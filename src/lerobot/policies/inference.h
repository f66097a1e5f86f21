// Deployment API: load a pretrained_model directory and turn raw robot observations (uint8
// images HWC or CHW, float state, no batch dim) into actions in robot units, with no Python.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"

namespace lerobot {

class InferencePolicy {
 public:
  // Reads config.json, model.safetensors and the processor files of `pretrained_dir`.
  explicit InferencePolicy(const fs::path& pretrained_dir, torch::Device device = torch::kCPU);

  // observation: feature key -> tensor without batch dim. Cameras: uint8 (H, W, C) or (C, H, W)
  // (scaled by 1/255) or float (C, H, W) already in [0, 1]; state: float (S).
  // Returns the next action (A), float32 on CPU, unnormalized.
  torch::Tensor select_action(const std::map<std::string, torch::Tensor>& observation);
  // The whole predicted chunk (chunk, A), unnormalized; does not touch the action queue.
  torch::Tensor predict_action_chunk(const std::map<std::string, torch::Tensor>& observation);
  // Start of an episode: clears the action queue.
  void reset();

  const PolicyConfig& config() const { return policy_->config(); }
  Policy& policy() { return *policy_; }
  const PolicyProcessors& processors() const { return processors_; }

  // Raw observation -> normalized batch of 1 on the policy's device (exposed for tests).
  Batch prepare(const std::map<std::string, torch::Tensor>& observation) const;

 private:
  PolicyPtr policy_;
  PolicyProcessors processors_;
  torch::Device device_;
};

}  // namespace lerobot
