// ACTPolicy: loss, inference queue and temporal ensembling (see modeling_act.h).
#include "lerobot/policies/act/modeling_act.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/policies/action_queue.h"
#include "lerobot/policies/policy_units.h"

namespace lerobot {

ACTTemporalEnsembler::ACTTemporalEnsembler(double coeff, int64_t chunk_size) : chunk_size_(chunk_size) {
  weights_ = torch::exp(-coeff * torch::arange(chunk_size, torch::kFloat64)).to(torch::kFloat32);
  weights_cumsum_ = torch::cumsum(weights_, 0);
}

void ACTTemporalEnsembler::reset() {
  ensembled_ = torch::Tensor();
  counts_ = torch::Tensor();
}

torch::Tensor ACTTemporalEnsembler::update(const torch::Tensor& actions) {
  auto w = weights_.to(actions.device(), actions.scalar_type());
  auto wc = weights_cumsum_.to(actions.device(), actions.scalar_type());
  if (!ensembled_.defined()) {
    ensembled_ = actions.clone();
    counts_ = torch::ones({chunk_size_, 1}, torch::TensorOptions().dtype(torch::kLong).device(actions.device()));
  } else {
    // Running weighted mean of the overlapping part, then append the newest chunk's last action.
    auto n = ensembled_.size(1);
    auto blended = ensembled_ * wc.index({counts_ - 1});
    blended = blended + actions.narrow(1, 0, n) * w.index({counts_});
    blended = blended / wc.index({counts_});
    counts_ = torch::clamp(counts_ + 1, c10::nullopt, chunk_size_);
    ensembled_ = torch::cat({blended, actions.narrow(1, n, 1)}, 1);
    counts_ = torch::cat({counts_, torch::ones_like(counts_.narrow(0, 0, 1))}, 0);
  }
  auto action = ensembled_.select(1, 0);
  ensembled_ = ensembled_.narrow(1, 1, ensembled_.size(1) - 1);
  counts_ = counts_.narrow(0, 1, counts_.size(0) - 1);
  return action;
}

ACTPolicy::ACTPolicy(const ACTConfig& config, bool load_pretrained_backbone) : config_(config) {
  model = register_module("model", ACTModel(config_));
  if (model->backbone && load_pretrained_backbone)
    load_backbone_weights_option(*model->backbone, config_.pretrained_backbone_weights, "policy.pretrained_backbone_weights");
  if (config_.temporal_ensemble_coeff)
    ensembler_ = std::make_unique<ACTTemporalEnsembler>(*config_.temporal_ensemble_coeff, config_.chunk_size);
  reset();
}

void ACTPolicy::reset() {
  queue_.clear();
  if (ensembler_) ensembler_->reset();
}

PolicyOutput ACTPolicy::forward(const Batch& batch) {
  auto it = batch.find("action");
  if (it == batch.end()) throw_usage("ACT training needs 'action' in the batch", "action");
  const auto& target = it->second;  // (B, chunk, A)
  auto res = model->forward(batch);
  auto abs_err = (target - res.actions).abs();
  torch::Tensor valid;
  if (batch.count("action_is_pad")) valid = batch.at("action_is_pad").logical_not().to(abs_err.scalar_type());
  else valid = torch::ones({abs_err.size(0), abs_err.size(1)}, abs_err.options());
  // Masked mean over valid steps: sum(|err| * valid) / max(1, n_valid_steps * A).
  auto denom = torch::clamp_min(valid.sum() * static_cast<double>(abs_err.size(2)), 1.0);
  auto l1 = (abs_err * valid.unsqueeze(-1)).sum() / denom;
  PolicyOutput out;
  out.values["l1_loss"] = l1.detach();
  if (config_.use_vae && res.mu.defined()) {
    auto kld = (-0.5 * (1 + res.log_sigma_x2 - res.mu.pow(2) - res.log_sigma_x2.exp())).sum(-1).mean();
    out.values["kld_loss"] = kld.detach();
    out.loss = l1 + kld * config_.kl_weight;
  } else {
    out.loss = l1;
  }
  return out;
}

torch::Tensor ACTPolicy::predict_action_chunk(const Batch& batch) {
  torch::NoGradGuard no_grad;
  eval();
  return model->forward(batch).actions;
}

torch::Tensor ACTPolicy::select_action(const Batch& batch) {
  torch::NoGradGuard no_grad;
  eval();
  if (ensembler_) return ensembler_->update(next_chunk(batch));
  return pop_queued_action(queue_, config_.n_action_steps, [&] { return next_chunk(batch); });
}

std::vector<PolicyUnit> ACTPolicy::units() {
  std::vector<UnitModules> u;
  if (model->vae_encoder) add_list_units(u, "ACTEncoderLayer", model->vae_encoder->layers);
  add_list_units(u, "ACTEncoderLayer", model->encoder->layers);
  add_list_units(u, "ACTDecoderLayer", model->decoder->layers);
  return declare_units(*this, u);
}

std::vector<PolicyParamGroup> ACTPolicy::optim_param_groups() {
  PolicyParamGroup main, backbone;
  backbone.lr = config_.optimizer_lr_backbone;
  for (auto& p : named_parameters(true)) {
    if (!p.value().requires_grad()) continue;
    auto& g = p.key().rfind("model.backbone", 0) == 0 ? backbone : main;
    g.names.push_back(p.key());
    g.params.push_back(p.value());
  }
  return {main, backbone};
}

}  // namespace lerobot
