// DiffusionPolicy: batch preparation, loss and the inference queues (see modeling_diffusion.h).
#include "lerobot/policies/diffusion/modeling_diffusion.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/policy_units.h"

namespace lerobot {

DiffusionPolicy::DiffusionPolicy(const DiffusionConfig& config, bool load_pretrained_backbone)
    : config_(config), obs_queues_(config.n_obs_steps) {
  config_.validate();
  diffusion = register_module("diffusion", DiffusionModel(config_));
  for (auto& enc : diffusion->encoders()) {
    if (load_pretrained_backbone)
      load_backbone_weights_option(*enc->backbone, config_.pretrained_backbone_weights,
                                   "policy.pretrained_backbone_weights");
    enc->run_sizing_pass();
  }
  reset();
}

void DiffusionPolicy::set_device_side_randomness(bool on) {
  for (auto& enc : diffusion->encoders()) enc->device_side_crop_offsets = on;
}

void DiffusionPolicy::reset() {
  obs_queues_.clear();
  action_queue_.clear();
}

std::vector<PolicyUnit> DiffusionPolicy::units() {
  std::vector<UnitModules> u;
  const auto& unet = diffusion->unet;
  for (const auto& level : *unet->down_modules) {
    const auto& list = *level->as<torch::nn::ModuleList>();
    for (size_t i = 0; i < 2; ++i) u.push_back({"DiffusionConditionalResidualBlock1d", {list[i].get()}});
  }
  add_list_units(u, "DiffusionConditionalResidualBlock1d", unet->mid_modules);
  for (const auto& level : *unet->up_modules) {
    const auto& list = *level->as<torch::nn::ModuleList>();
    for (size_t i = 0; i < 2; ++i) u.push_back({"DiffusionConditionalResidualBlock1d", {list[i].get()}});
  }
  return declare_units(*this, u);
}

PolicyOutput DiffusionPolicy::forward(const Batch& batch) {
  if (!batch.count("action")) throw_usage("Diffusion training needs 'action' in the batch", "action");
  const auto& action = batch.at("action");
  if (action.dim() != 3 || action.size(1) != config_.horizon)
    throw_usage("action must be (B, horizon=" + std::to_string(config_.horizon) + ", A)", "action",
                "the dataset's action_delta_indices give horizon steps");
  PolicyOutput out;
  out.loss = diffusion->compute_loss(with_observation_history(batch, config_, false, "Diffusion"));
  return out;
}

torch::Tensor DiffusionPolicy::predict_action_chunk(const Batch& batch, const torch::Tensor& noise) {
  torch::NoGradGuard no_grad;
  eval();
  return diffusion->generate_actions(with_observation_history(batch, config_, true, "Diffusion"), noise);
}

torch::Tensor DiffusionPolicy::select_action(const Batch& batch) {
  torch::NoGradGuard no_grad;
  eval();
  const std::vector<std::string> keys = observation_keys(config_);
  obs_queues_.push(batch, keys, "Diffusion");
  if (action_queue_.empty()) {
    auto actions = next_chunk(obs_queues_.stacked(keys));  // (B, n_action_steps, A)
    for (int64_t i = 0; i < actions.size(1); ++i) action_queue_.push_back(actions.select(1, i));
  }
  auto action = action_queue_.front();
  action_queue_.pop_front();
  return action;
}

}  // namespace lerobot
