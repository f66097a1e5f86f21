// SmolVLAPolicy: LeRobot's SmolVLA (modeling_smolvla.py) around VLAFlowMatching: the camera,
// state and action padding, the flow-matching loss over the unpadded action dims and in-episode
// steps, and the action queue of n_action_steps. The language task arrives tokenized
// (observation.language.tokens / attention_mask, made by the preprocessor's tokenizer step).
#pragma once

#include <deque>
#include <filesystem>

#include "lerobot/policies/policy.h"
#include "lerobot/policies/rtc.h"
#include "lerobot/policies/smolvla/configuration_smolvla.h"
#include "lerobot/policies/smolvla/vla_flow_matching.h"
#include "lerobot/policies/vlm/vla_batch.h"

namespace lerobot {

class SmolVLAPolicy : public Policy, public RtcPolicy {
 public:
  // `vlm_dir`: the local folder of config.vlm_model_name (its config.json and tokenizer.json;
  // with config.load_vlm_weights also its *.safetensors, loaded into the backbone unless
  // `load_backbone_weights` is off: a checkpoint's weights replace them anyway).
  SmolVLAPolicy(const SmolVLAConfig& config, const std::filesystem::path& vlm_dir, bool load_backbone_weights = true);

  // Batch: cameras (B, C, H, W) in [0, 1], observation.state (B, S), the language tokens and mask,
  // action (B, chunk, A), action_is_pad (B, chunk). Noise and time are drawn as LeRobot draws them
  // (normal noise on the device, Beta(1.5, 1) time on the CPU generator).
  PolicyOutput forward(const Batch& batch) override;
  // The same loss for a given noise (B, chunk, max_action_dim) and time (B,).
  PolicyOutput forward(const Batch& batch, const torch::Tensor& noise, const torch::Tensor& time);
  torch::Tensor predict_action_chunk(const Batch& batch) override;  // (B, chunk, A)
  torch::Tensor predict_action_chunk(const Batch& batch, const torch::Tensor& noise);
  // Refused with real-time chunking on (LeRobot asserts the same): chunks then come from
  // predict_action_chunk_rtc with the previous chunk's leftover.
  torch::Tensor select_action(const Batch& batch) override;
  void set_rtc(std::optional<RtcSettings> settings) override;
  const std::optional<RtcSettings>& rtc() const override { return rtc_; }
  torch::Tensor predict_action_chunk_rtc(const Batch& batch, const RtcGuidance& guidance,
                                         const torch::Tensor& noise = torch::Tensor()) override;
  void reset() override { action_queue_.clear(); }
  const PolicyConfig& config() const override { return config_; }
  // LeRobot's get_optim_params: every parameter, the frozen ones included (they get no gradient,
  // so the optimizer skips them; they keep their places in the optimizer's parameter numbering).
  std::vector<PolicyParamGroup> optim_param_groups() override;
  // The vision tower's layers (SmolVLMEncoderLayer, run once per camera), then the joint layers
  // (SmolVLAJointLayer: VLM text layer i with the expert layer beside it, when there is one).
  std::vector<PolicyUnit> units() override;
  // The captured (CUDA-graph) training step is refused for now: not yet run on a GPU, and with
  // pad_language_to=longest the token length changes with the batch's tasks.
  std::string graph_capture_blocker() const override;
  // On: the flow time's Beta draw runs on the policy's device (capturable); off: on the CPU
  // generator, as LeRobot draws it.
  void set_device_side_randomness(bool on) override { device_side_time_ = on; }

  VLAFlowMatching model{nullptr};

 private:
  VlaInputs prepare_inputs(const Batch& batch) const;
  torch::Tensor draw_noise(const Batch& batch) const;  // normal (B, chunk, max_action_dim) on the state's device
  // The denoised chunk, cut to the action dims (and Aloha-converted), each velocity through `guide`.
  torch::Tensor sample_chunk(const Batch& batch, const torch::Tensor& noise, const VLAFlowMatchingImpl::VelocityGuide& guide);
  SmolVLAConfig config_;
  int64_t action_dim_ = 0;
  bool device_side_time_ = false;
  std::deque<torch::Tensor> action_queue_;
  std::optional<RtcSettings> rtc_;  // from config_.rtc_config
};

// The files SmolVLA reads from its backbone folder (the weights too with load_vlm_weights).
std::vector<std::string> smolvla_backbone_files(const SmolVLAConfig& config, bool with_weights);
class TextTokenizer;
// The id of the image token the tokenizer config names `name` (fake_image_token,
// global_image_token), or of `fallback`, SmolVLM's own token text, when it names none.
int64_t image_token_id(const TextTokenizer& tokenizer, const std::string& name, const std::string& fallback);

}  // namespace lerobot
