// SmolVLAPolicy (see modeling_smolvla.h).
#include "lerobot/policies/smolvla/modeling_smolvla.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/action_queue.h"
#include "lerobot/policies/policy_units.h"
#include "lerobot/policies/smolvla/vlm_weights.h"
#include "lerobot/policies/vlm/module_parts.h"
#include "lerobot/policies/vlm/text_tokenizer.h"

namespace lerobot {
namespace {

// LeRobot's Aloha conversions (adapt_to_pi_aloha), on the values the policy sees: joints 1, 2, 8
// and 9 flipped, the grippers (6, 13) mapped between Aloha's linear space and pi's angular one.
torch::Tensor unnormalize(const torch::Tensor& x, double lo, double hi) { return x * (hi - lo) + lo; }
torch::Tensor normalize(const torch::Tensor& x, double lo, double hi) { return (x - lo) / (hi - lo); }

torch::Tensor gripper_to_angular(torch::Tensor v) {
  v = unnormalize(v, 0.01844, 0.05800);
  const double arm = 0.036, horn = 0.022;  // Interbotix's linear_to_radian
  v = torch::arcsin(torch::clamp((v.pow(2) + horn * horn - arm * arm) / (v * (2 * horn)), -1.0, 1.0));
  return normalize(v, 0.4, 1.5);
}
torch::Tensor gripper_from_angular(const torch::Tensor& v) { return normalize(unnormalize(v, 0.4, 1.5), -0.6213, 1.4910); }
torch::Tensor gripper_from_angular_inv(const torch::Tensor& v) { return normalize(unnormalize(v, -0.6213, 1.4910), 0.4, 1.5); }

// x (..., 14+): a copy with the joints flipped and `gripper` applied to 6 and 13.
template <class Fn>
torch::Tensor aloha_convert(const torch::Tensor& x, Fn gripper) {
  auto y = x.clone();
  for (int64_t i : {1, 2, 8, 9}) y.select(-1, i).mul_(-1);
  for (int64_t i : {6, 13}) y.select(-1, i).copy_(gripper(y.select(-1, i)));
  return y;
}

const torch::Tensor& need(const Batch& batch, const std::string& key) { return vla_batch_entry(batch, key, "SmolVLA"); }

}  // namespace

int64_t image_token_id(const TextTokenizer& tokenizer, const std::string& name, const std::string& fallback) {
  const auto& named = tokenizer.special_tokens();
  auto it = named.find(name);
  return tokenizer.token_id(it != named.end() ? it->second : fallback);
}

std::vector<std::string> smolvla_backbone_files(const SmolVLAConfig& config, bool with_weights) {
  std::vector<std::string> files = {"config.json", "tokenizer.json", "tokenizer_config.json"};
  if (config.load_vlm_weights && with_weights) files.push_back("*.safetensors");
  return files;
}

SmolVLAPolicy::SmolVLAPolicy(const SmolVLAConfig& config, const std::filesystem::path& vlm_dir,
                             bool load_backbone_weights)
    : config_(config) {
  config_.add_empty_cameras();
  config_.validate();
  rtc_ = parse_rtc_config(config_.rtc_config, "policy.rtc_config");
  if (!config_.use_cache)  // LeRobot's own denoising without the cache fails (its masks span a prefix it drops)
    throw_usage("use_cache=false is not supported: the denoising steps always reuse the prefix's keys and values",
                "policy.use_cache", "pass --policy.use_cache=true (LeRobot's default)");
  auto it = config_.output_features.find("action");
  if (it == config_.output_features.end() || it->second.shape.empty())
    throw_usage("SmolVLA needs an 'action' output feature", "policy.output_features");
  action_dim_ = it->second.shape[0];
  const auto arch = SmolVLMArch::from_folder(vlm_dir);
  // LeRobot takes them from the processor's tokenizer (fake_image_token_id, global_image_token_id).
  const TextTokenizer tokenizer = TextTokenizer::from_folder(vlm_dir);
  model = register_module("model", VLAFlowMatching(config_, arch,
                                                   image_token_id(tokenizer, "fake_image_token", "<fake_token_around_image>"),
                                                   image_token_id(tokenizer, "global_image_token", "<global-img>")));
  init_transformers_weights(*model->vlm_with_expert->vlm, 0.02);
  init_expert_weights(*model->vlm_with_expert, 0.02);
  if (config_.load_vlm_weights) model->vlm_with_expert->use_bfloat16_backbone();
  if (config_.load_vlm_weights && load_backbone_weights) load_vlm_weights(*model->vlm_with_expert->vlm, vlm_dir);
}

VlaInputs SmolVLAPolicy::prepare_inputs(const Batch& batch) const {
  VlaInputs in;
  torch::Tensor last_img, last_mask;
  int64_t missing = 0;
  for (const auto& key : config_.image_feature_keys()) {
    auto found = batch.find(key);
    if (found == batch.end()) {
      ++missing;
      continue;
    }
    auto img = found->second;
    if (img.dim() == 5) img = img.select(1, img.size(1) - 1);
    if (config_.resize_imgs_with_padding)
      img = resize_with_pad(img, (*config_.resize_imgs_with_padding)[1], (*config_.resize_imgs_with_padding)[0], 0.0);
    img = img * 2.0 - 1.0;  // SigLIP's [-1, 1]
    auto m = batch.find(key + "_padding_mask");
    auto mask = m != batch.end() ? m->second.to(torch::kBool)
                                 : torch::ones({img.size(0)}, torch::TensorOptions().dtype(torch::kBool).device(img.device()));
    in.images.push_back(img);
    in.image_masks.push_back(mask);
    last_img = img, last_mask = mask;
  }
  if (in.images.empty())
    throw_usage("none of the policy's cameras is in the batch", "policy.input_features",
                "train on a dataset with the cameras the policy was made for");
  for (int64_t i = 0; i < missing && i < config_.empty_cameras; ++i) {  // empty slots: -1 images, masked out
    in.images.push_back(torch::ones_like(last_img) * -1);
    in.image_masks.push_back(torch::zeros_like(last_mask));
  }
  auto state = need(batch, "observation.state");
  if (state.dim() > 2) state = state.select(1, state.size(1) - 1);
  if (config_.adapt_to_pi_aloha) state = aloha_convert(state, gripper_to_angular);
  in.state = pad_vector(state, config_.max_state_dim);
  in.tokens = need(batch, kLanguageTokens);
  in.token_mask = need(batch, kLanguageMask).to(torch::kBool);
  return in;
}

PolicyOutput SmolVLAPolicy::forward(const Batch& batch) {
  const auto& action = need(batch, "action");
  const std::vector<int64_t> shape = {action.size(0), action.size(1), config_.max_action_dim};
  auto noise = torch::normal(0.0, 1.0, shape, c10::nullopt, action.options().dtype(torch::kFloat));
  auto time = sample_flow_time(action.size(0), action.device(), device_side_time_);
  return forward(batch, noise, time);
}

PolicyOutput SmolVLAPolicy::forward(const Batch& batch, const torch::Tensor& noise, const torch::Tensor& time) {
  const VlaInputs in = prepare_inputs(batch);
  auto actions = need(batch, "action");
  if (config_.adapt_to_pi_aloha) actions = aloha_convert(actions, gripper_from_angular_inv);
  actions = pad_vector(actions, config_.max_action_dim);
  auto losses = model->forward(in, actions, noise, time).narrow(2, 0, action_dim_);
  PolicyOutput out;
  out.values["losses_after_forward"] = losses.detach().mean();
  auto pad = batch.find("action_is_pad");
  torch::Tensor loss;
  if (pad != batch.end()) {
    auto in_episode = pad->second.logical_not();
    losses = losses * in_episode.unsqueeze(-1);
    out.values["losses_after_in_ep_bound"] = losses.detach().mean();
    out.values["losses_after_rm_padding"] = out.values["losses_after_in_ep_bound"];
    auto valid = (in_episode.sum() * losses.size(-1)).clamp_min(1);
    loss = losses.sum() / valid;
  } else {
    out.values["losses_after_rm_padding"] = losses.detach().mean();
    loss = losses.mean();
  }
  out.loss = loss;
  return out;
}

torch::Tensor SmolVLAPolicy::draw_noise(const Batch& batch) const {
  const auto& state = need(batch, "observation.state");
  const std::vector<int64_t> shape = {state.size(0), config_.chunk_size, config_.max_action_dim};
  return torch::normal(0.0, 1.0, shape, c10::nullopt, state.options().dtype(torch::kFloat));
}

torch::Tensor SmolVLAPolicy::predict_action_chunk(const Batch& batch) {
  return predict_action_chunk(batch, draw_noise(batch));
}

torch::Tensor SmolVLAPolicy::predict_action_chunk(const Batch& batch, const torch::Tensor& noise) {
  return sample_chunk(batch, noise, {});
}

torch::Tensor SmolVLAPolicy::sample_chunk(const Batch& batch, const torch::Tensor& noise,
                                          const VLAFlowMatchingImpl::VelocityGuide& guide) {
  eval();
  torch::NoGradGuard no_grad;
  auto actions = model->sample_actions(prepare_inputs(batch), noise, guide).narrow(2, 0, action_dim_);
  return config_.adapt_to_pi_aloha ? aloha_convert(actions, gripper_from_angular) : actions;
}

torch::Tensor SmolVLAPolicy::predict_action_chunk_rtc(const Batch& batch, const RtcGuidance& guidance,
                                                      const torch::Tensor& noise) {
  if (!rtc_)
    throw_usage("real-time chunking is off for this policy", "policy.rtc_config",
                "turn it on first (InferencePolicy::set_rtc, or rtc_config in config.json)");
  const RtcSettings settings = *rtc_;
  return sample_chunk(batch, noise.defined() ? noise : draw_noise(batch),
                      [&](const torch::Tensor& x_t, const torch::Tensor& v_t, double time) {
                        return rtc_guided_velocity(settings, guidance, x_t, v_t, time);
                      });
}

void SmolVLAPolicy::set_rtc(std::optional<RtcSettings> settings) {
  if (settings) check_rtc_mode(*settings, /*trained_supported=*/false, "policy.rtc_config");
  rtc_ = std::move(settings);
  config_.rtc_config = rtc_ ? rtc_config_json(*rtc_) : Json(nullptr);
}

torch::Tensor SmolVLAPolicy::select_action(const Batch& batch) {
  if (rtc_)
    throw_usage("select_action does not take real-time chunking (LeRobot's SmolVLA asserts the same)",
                "policy.rtc_config",
                "predict chunks with the previous chunk's leftover (InferencePolicy::predict_action_chunk with "
                "guidance), or set rtc_config to null to evaluate with select_action");
  return pop_queued_action(action_queue_, config_.n_action_steps, [&] { return next_chunk(batch); });
}

std::string SmolVLAPolicy::graph_capture_blocker() const {
  if (config_.pad_language_to == "longest")
    return "the language tokens' length follows the batch's longest task (pass --policy.pad_language_to=max_length)";
  return "SmolVLA's captured step has not been run on a GPU yet";
}

std::vector<PolicyUnit> SmolVLAPolicy::units() {
  auto& vwe = *model->vlm_with_expert;
  std::vector<UnitModules> u;
  const auto& vision = vwe.vlm->vision_model;
  for (size_t i = 0; i < vision->num_layers(); ++i) u.push_back({"SmolVLMEncoderLayer", {vision->layer_module(i)}});
  for (int64_t i = 0; i < vwe.num_vlm_layers(); ++i) {
    UnitModules joint{"SmolVLAJointLayer", {vwe.vlm->text_model->layers[i].get()}};
    const int64_t e = vwe.expert_layer_for(i);
    if (e >= 0) joint.modules.push_back(vwe.lm_expert->layers[e].get());
    u.push_back(joint);
  }
  return declare_units(*this, u);
}

std::vector<PolicyParamGroup> SmolVLAPolicy::optim_param_groups() {
  return every_parameter_group(*this);
}

}  // namespace lerobot
