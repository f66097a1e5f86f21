// Deployment API: load a pretrained_model directory and turn raw robot observations (uint8
// images HWC or CHW, float state, no batch dim) into actions in robot units, with no Python.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"
#include "lerobot/policies/rtc.h"

namespace lerobot {

class GraphedChunkPredictor;

class InferencePolicy {
 public:
  // Reads config.json, model.safetensors and the processor files of `pretrained_dir`. On a CUDA
  // device (LibTorch 2.x) with cuda_graphs, each chunk prediction (for Diffusion the whole
  // denoising loop) is recorded once, after two eager calls, and replayed as one CUDA graph.
  explicit InferencePolicy(const fs::path& pretrained_dir, torch::Device device = torch::kCPU,
                           bool cuda_graphs = true);
  ~InferencePolicy();
  InferencePolicy(const InferencePolicy&) = delete;
  InferencePolicy& operator=(const InferencePolicy&) = delete;

  // observation: feature key -> tensor without batch dim. Cameras: uint8 (H, W, C) or (C, H, W)
  // (scaled by 1/255) or float (C, H, W) already in [0, 1]; state: float (S).
  // Returns the next action (A), float32 on CPU, unnormalized; with relative actions (π), this
  // observation's state added, also to an action taken from the queue (as LeRobot's loops do).
  torch::Tensor select_action(const std::map<std::string, torch::Tensor>& observation);
  // The whole predicted chunk (chunk, A), unnormalized (absolute, as above); does not touch the
  // action queue.
  torch::Tensor predict_action_chunk(const std::map<std::string, torch::Tensor>& observation);
  // Real-time chunking (SmolVLA; LeRobot's RTC, guided mode): on with `settings`, off with
  // std::nullopt; a usage error for a policy without it. While it is on, select_action is
  // refused, as LeRobot refuses it; chunks come from the call below.
  void set_rtc(std::optional<RtcSettings> settings);
  // On with the checkpoint's rtc_config, or LeRobot's RTCConfig defaults when it has none (what
  // `infer --left_over` and `robot_loop --rtc` do); a usage error naming `flag` for a policy
  // without real-time chunking.
  void ensure_rtc(const std::string& flag);
  // The chunk (chunk, A) in robot units, its denoising pulled toward `left_over`: the actions of
  // the previous chunk, as this call returned them, that the robot has not executed yet (T, A),
  // of which the first `inference_delay` run while this prediction runs. An undefined left_over:
  // the first chunk (no pull). `execution_horizon`: the settings' unless given.
  torch::Tensor predict_action_chunk(const std::map<std::string, torch::Tensor>& observation,
                                     const torch::Tensor& left_over, int64_t inference_delay,
                                     std::optional<int64_t> execution_horizon = std::nullopt);
  // Start of an episode: clears the action queue.
  void reset();
  // The task in words, for a policy that reads it (SmolVLA); "" until set, as LeRobot's eval gives
  // an env without a task description.
  void set_task(std::string task) { task_ = std::move(task); }

  const PolicyConfig& config() const { return policy_->config(); }
  Policy& policy() { return *policy_; }
  const PolicyProcessors& processors() const { return processors_; }

  // Raw observation -> normalized batch of 1 on the policy's device (exposed for tests).
  Batch prepare(const std::map<std::string, torch::Tensor>& observation) const;
  // The raw observation.state (1, S) of the last observation select_action / predict_action_chunk
  // took: what the postprocessor adds back with relative actions (LeRobot's cached state), so a
  // queued action is made absolute with the current observation's state. Undefined before the first.
  const torch::Tensor& last_state() const { return last_state_; }
  // Whether chunks are CUDA-graph replays now; else why not ("" while warming up).
  bool graphs_replaying() const;
  std::string graphs_why_not() const;

 private:
  PolicyPtr policy_;
  PolicyProcessors processors_;
  torch::Device device_;
  std::string task_;
  torch::Tensor last_state_;  // see last_state()
  std::unique_ptr<GraphedChunkPredictor> graphed_;
  // prepare(), also keeping the observation's raw state in last_state_.
  Batch take_observation(const std::map<std::string, torch::Tensor>& observation);
  Batch prepare_into(const std::map<std::string, torch::Tensor>& observation, torch::Tensor* raw_state) const;
};

}  // namespace lerobot
