// VQBeTPolicy: phases, queues and optimizer groups (see modeling_vqbet.h).
#include "lerobot/policies/vqbet/modeling_vqbet.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/policies/policy_units.h"

namespace lerobot {

namespace {
void append(PolicyParamGroup& g, torch::nn::Module& m, const std::string& prefix) {
  for (auto& p : m.named_parameters(true)) {
    g.names.push_back(prefix + p.key());
    g.params.push_back(p.value());
  }
}
}  // namespace

VQBeTPolicy::VQBeTPolicy(const VQBeTConfig& config, bool load_pretrained_backbone)
    : config_(config), obs_queues_(config.n_obs_steps) {
  config_.validate();
  if (config_.input_features.empty())
    throw_usage("VQ-BeT needs its input features (one camera and observation.state)", "policy.input_features");
  vqbet = register_module("vqbet", VQBeTModel(config_));
  if (load_pretrained_backbone)
    load_backbone_weights_option(*vqbet->rgb_encoder->backbone, config_.pretrained_backbone_weights,
                                 "policy.pretrained_backbone_weights");
  vqbet->rgb_encoder->run_sizing_pass();
  reset();
}

void VQBeTPolicy::on_state_loaded() {
  discretized_ = vqbet->action_head->vqvae_model->discretized.item<bool>();
  vqbet->action_head->vqvae_model->vq_layer->sync_from_buffers();
}

void VQBeTPolicy::reset() {
  obs_queues_.clear();
  action_queue_.clear();
}

std::string VQBeTPolicy::graph_capture_blocker() const {
  return "VQ-BeT decides on the host when its VQ-VAE phase ends (n_vqvae_training_steps)";
}

PolicyOutput VQBeTPolicy::discretize(const Batch& batch) {
  const auto& actions = batch.at("action");  // (B, L, A)
  const int64_t W = config_.action_chunk_size, C = config_.vqvae_n_embed;
  // Every chunk of W consecutive actions in the window, window offset first (LeRobot's order).
  std::vector<torch::Tensor> chunks;
  for (int64_t j = 0; j + W <= actions.size(1); ++j) chunks.push_back(actions.narrow(1, j, W));
  auto vq = vqbet->action_head->vqvae_model->forward_chunks(torch::cat(chunks, 0));
  PolicyOutput out;
  out.loss = vq.loss;
  {
    torch::NoGradGuard no_grad;
    // The number of codes in use per layer and of code pairs, counted on the device.
    const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(actions.device());
    torch::Tensor codes_used = torch::zeros({}, opts);
    for (int64_t q = 0; q < kVqvaeNumLayers; ++q)
      codes_used = codes_used + torch::zeros({C}, opts).index_fill_(0, vq.codes.select(1, q), 1).sum();
    const auto pairs = vq.codes.select(1, 0) * C + vq.codes.select(1, 1);
    out.values["n_different_codes"] = codes_used;
    out.values["n_different_combinations"] = torch::zeros({C * C}, opts).index_fill_(0, pairs, 1).sum();
    out.values["recon_l1_error"] = vq.recon_l1;
  }
  // Held-out and other evaluation forwards do not count (LeRobot counts every forward).
  if (is_training() && ++optimized_steps_ >= config_.n_vqvae_training_steps) {
    discretized_ = true;
    vqbet->action_head->vqvae_model->discretized.fill_(true);
    vqbet->action_head->vqvae_model->vq_layer->set_frozen(true);
    LOG_INFO << "VQ-BeT: the VQ-VAE has trained for " << optimized_steps_
             << " steps; its codebooks are frozen and the GPT trains from the next step";
  }
  return out;
}

PolicyOutput VQBeTPolicy::forward(const Batch& batch) {
  if (!batch.count("action")) throw_usage("VQ-BeT training needs 'action' in the batch", "action");
  const auto& action = batch.at("action");
  const int64_t need = config_.n_obs_steps + config_.n_action_pred_token + config_.action_chunk_size - 2;
  if (action.dim() != 3 || action.size(1) != need)
    throw_usage("action must be (B, n_obs_steps + n_action_pred_token + action_chunk_size - 2 = " +
                    std::to_string(need) + ", A)",
                "action", "the dataset's action_delta_indices give that window");
  if (!discretized_) return discretize(batch);
  PolicyOutput out;
  out.loss = vqbet->loss(with_observation_history(batch, config_, false, "VQ-BeT"), out.values);
  return out;
}

torch::Tensor VQBeTPolicy::predict_action_chunk(const Batch& batch) {
  torch::NoGradGuard no_grad;
  eval();
  if (!discretized_ && !warned_undiscretized_) {
    warned_undiscretized_ = true;
    LOG_WARNING << "this VQ-BeT policy has not finished its VQ-VAE phase (n_vqvae_training_steps="
                << config_.n_vqvae_training_steps << "): its actions come from an untrained GPT";
  }
  return vqbet->rollout(with_observation_history(batch, config_, true, "VQ-BeT"));
}

torch::Tensor VQBeTPolicy::select_action(const Batch& batch) {
  torch::NoGradGuard no_grad;
  eval();
  const std::vector<std::string> keys = observation_keys(config_);  // the state and the camera
  obs_queues_.push(batch, keys, "VQ-BeT");
  if (action_queue_.empty()) {
    auto actions = next_chunk(obs_queues_.stacked(keys));  // (B, action_chunk_size, A)
    for (int64_t i = 0; i < actions.size(1); ++i) action_queue_.push_back(actions.select(1, i));
  }
  auto action = action_queue_.front();
  action_queue_.pop_front();
  return action;
}

std::vector<PolicyUnit> VQBeTPolicy::units() {
  std::vector<UnitModules> u;
  add_list_units(u, "Block", vqbet->policy->transformer->h);
  return declare_units(*this, u);
}

std::vector<PolicyParamGroup> VQBeTPolicy::optim_param_groups() {
  auto& m = *vqbet;
  auto& head = *m.action_head;
  PolicyParamGroup decay, vqvae, no_decay;
  vqvae.lr = config_.optimizer_vqvae_lr;
  vqvae.weight_decay = config_.optimizer_vqvae_weight_decay;
  no_decay.weight_decay = 0.0;
  append(vqvae, *head.vqvae_model->encoder, "vqbet.action_head.vqvae_model.encoder.");
  append(vqvae, *head.vqvae_model->decoder, "vqbet.action_head.vqvae_model.decoder.");
  append(vqvae, *head.vqvae_model->vq_layer, "vqbet.action_head.vqvae_model.vq_layer.");  // no parameters
  std::vector<std::string> dn, nn;
  m.policy->split_decay(decay.params, dn, no_decay.params, nn);
  for (auto& n : dn) decay.names.push_back("vqbet.policy." + n);
  for (auto& n : nn) no_decay.names.push_back("vqbet.policy." + n);
  append(decay, *m.rgb_encoder, "vqbet.rgb_encoder.");
  append(decay, *m.state_projector, "vqbet.state_projector.");
  append(decay, *m.rgb_feature_projector, "vqbet.rgb_feature_projector.");
  decay.names.push_back("vqbet.action_token");
  decay.params.push_back(m.action_token);
  append(decay, *head.map_to_cbet_preds_offset, "vqbet.action_head.map_to_cbet_preds_offset.");
  if (config_.sequentially_select) {
    append(decay, *head.map_to_cbet_preds_primary_bin, "vqbet.action_head.map_to_cbet_preds_primary_bin.");
    append(decay, *head.map_to_cbet_preds_secondary_bin, "vqbet.action_head.map_to_cbet_preds_secondary_bin.");
  } else {
    append(decay, *head.map_to_cbet_preds_bin, "vqbet.action_head.map_to_cbet_preds_bin.");
  }
  return {decay, vqvae, no_decay};
}

}  // namespace lerobot
