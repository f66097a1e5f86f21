// PI0Policy and PI05Policy (LeRobot's policies/pi0/modeling_pi0.py, pi05/modeling_pi05.py)
// around PiFlowMatching: cameras resized with centred padding to image_resolution and scaled to
// [-1, 1] (missing ones as empty -1 images, masked out), state and actions zero-padded to
// max_state_dim / max_action_dim, the flow-matching loss over the unpadded action dims (LeRobot's
// π policies do not mask action_is_pad), and the action queue of n_action_steps. The language
// prompt arrives tokenized (observation.language.tokens / attention_mask, made by the
// preprocessor; π0.5's prompt holds the discretised state unless it has proprioceptive memory).
// π0.5's MEM observation memory (use_visual_memory / use_proprioceptive_memory): a batch's camera
// clips (B, T, C, H, W) and state histories (B, T, S) with their `_is_pad` masks go to the model;
// at inference single observations are recorded in an ObservationMemory and sampled from it.
#pragma once

#include <deque>
#include <memory>
#include <optional>

#include "lerobot/policies/observation_memory.h"
#include "lerobot/policies/pi/pi_flow_matching.h"
#include "lerobot/policies/pi0/configuration_pi0.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/rtc.h"

namespace lerobot {

class PiPolicy : public Policy, public RtcPolicy {
 public:
  // `arch`: the model's sizes; by default the config's variants at full size (tests pass tiny ones).
  explicit PiPolicy(const PI0Config& config, std::optional<PaliGemmaArch> arch = std::nullopt);
  explicit PiPolicy(const PI05Config& config, std::optional<PaliGemmaArch> arch = std::nullopt);

  // Noise and time drawn as LeRobot draws them (normal noise on the device; Beta time on the CPU
  // generator); π0.5 with rtc_training_max_delay also draws each sample's clean prefix length.
  PolicyOutput forward(const Batch& batch) override;
  // The loss for a given noise (B, chunk, max_action_dim) and time (B,) (and clean prefix mask).
  PolicyOutput forward(const Batch& batch, const torch::Tensor& noise, const torch::Tensor& time,
                       const torch::Tensor& prefix_mask = {});
  torch::Tensor predict_action_chunk(const Batch& batch) override;  // (B, chunk, A)
  torch::Tensor predict_action_chunk(const Batch& batch, const torch::Tensor& noise, int64_t steps = -1);
  torch::Tensor select_action(const Batch& batch) override;
  void set_rtc(std::optional<RtcSettings> settings) override;
  const std::optional<RtcSettings>& rtc() const override { return rtc_; }
  torch::Tensor predict_action_chunk_rtc(const Batch& batch, const RtcGuidance& guidance,
                                         const torch::Tensor& noise = torch::Tensor()) override;
  // Clears the action queue and π0.5's observation memory (a new episode).
  void reset() override {
    action_queue_.clear();
    if (memory_) memory_->clear();
  }
  const PolicyConfig& config() const override { return *config_; }
  const PiConfigBase& pi_config() const { return *config_; }
  bool is_pi05() const { return pi05_; }
  const char* display_name() const { return pi05_ ? "π0.5" : "π0"; }  // for messages
  // LeRobot's from_pretrained key fixing (fix_pi_checkpoint_keys: openpi's names, π0's and
  // π0.5's time-MLP names, lm_head copied into embed_tokens, "model." added), and SigLIP keys
  // without the vision_model level (transformers 5.6+ writes them so) given it back.
  TensorMap adapt_checkpoint_keys(TensorMap weights, const std::string& source) const override;
  // LeRobot's get_optim_params: every parameter (frozen ones get no gradient and are skipped).
  std::vector<PolicyParamGroup> optim_param_groups() override;
  // SigLIP's encoder layers (SiglipEncoderLayer, run once per camera), then the joint layer
  // pairs (PiJointLayer: PaliGemma's language layer i with the expert's layer i).
  std::vector<PolicyUnit> units() override;
  std::string graph_capture_blocker() const override;
  void set_device_side_randomness(bool on) override { device_side_time_ = on; }

  // The model's inputs: cameras resized, scaled and padded with empty slots; tokens; π0's state.
  PiInputs prepare_inputs(const Batch& batch) const;

  PiFlowMatching model{nullptr};

 private:
  PiPolicy(std::shared_ptr<PiConfigBase> config, bool pi05, std::optional<PaliGemmaArch> arch);
  torch::Tensor draw_noise(const Batch& batch) const;
  torch::Tensor sample_chunk(const Batch& batch, const torch::Tensor& noise, int64_t steps, const VelocityGuide& guide,
                             const torch::Tensor& hard_prefix = {}, const torch::Tensor& hard_prefix_mask = {});
  // LeRobot's _prepare_trained_rtc_prefix: the previous chunk's first inference_delay actions,
  // zero padded to the noise's shape, and the (B, chunk, width) mask of them; empty without a
  // leftover or with delay 0; usage errors for what LeRobot refuses.
  std::pair<torch::Tensor, torch::Tensor> trained_rtc_prefix(const RtcGuidance& guidance, const torch::Tensor& noise) const;

  std::shared_ptr<PiConfigBase> config_;
  bool pi05_;
  int64_t action_dim_ = 0;
  bool device_side_time_ = false;
  int64_t rtc_training_max_delay_ = 0;  // π0.5's training-time RTC (0: off)
  std::deque<torch::Tensor> action_queue_;
  std::optional<RtcSettings> rtc_;
  // π0.5's MEM inference memory (observation_memory.h): its cameras and/or state; null when off.
  std::unique_ptr<ObservationMemory> memory_;
  bool visual_memory() const;
  // The batch with its memory history (recorded now), unless it already has a time axis.
  Batch with_memory(const Batch& batch);
};

}  // namespace lerobot
