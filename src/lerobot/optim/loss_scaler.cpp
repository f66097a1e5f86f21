// LossScaler: GradScaler's scale / unscale_ / step / update cycle with host-side bookkeeping.
#include "lerobot/optim/loss_scaler.h"

#include <torch/torch.h>

#include <cmath>

#include "lerobot/common/error.h"

namespace lerobot {

LossScaler::LossScaler(LossScalerOptions options) : options_(options), scale_(options.init_scale) {
  LEROBOT_CHECK(options_.growth_factor > 1.0, "growth_factor must be > 1");
  LEROBOT_CHECK(options_.backoff_factor < 1.0, "backoff_factor must be < 1");
  LEROBOT_CHECK(options_.growth_interval > 0, "growth_interval must be > 0");
}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const {
  if (!options_.enabled) return loss;
  return loss * static_cast<float>(scale_);
}

void LossScaler::unscale_(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled || unscaled_) return;
  torch::NoGradGuard no_grad;
  // GradScaler: inv_scale = scale.double().reciprocal().float()
  const float inv = static_cast<float>(1.0 / scale_);
  std::vector<torch::Tensor> flags;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      auto g = p.grad();
      if (!g.defined()) continue;
      flags.push_back(torch::isfinite(g).all().logical_not().to(torch::kCPU));
      g.mul_(inv);
    }
  }
  found_inf_ = !flags.empty() && torch::stack(flags).any().item<bool>();
  if (any_rank_) found_inf_ = any_rank_(found_inf_);
  unscaled_ = true;
}

bool LossScaler::step(torch::optim::Optimizer& optimizer, const std::function<void()>& step_fn) {
  const auto do_step = [&] {
    if (step_fn) step_fn();
    else optimizer.step();
  };
  if (!options_.enabled) {
    do_step();
    return true;
  }
  LEROBOT_CHECK(!stepped_or_checked_, "LossScaler::step called twice without update()");
  unscale_(optimizer);
  stepped_or_checked_ = true;
  if (found_inf_) {
    ++skipped_steps_;
    return false;
  }
  do_step();
  return true;
}

void LossScaler::update() {
  if (!options_.enabled) return;
  if (unscaled_) {
    if (found_inf_) {
      scale_ *= options_.backoff_factor;
      growth_tracker_ = 0;
    } else if (++growth_tracker_ == options_.growth_interval) {
      const double grown = scale_ * options_.growth_factor;
      if (std::isfinite(static_cast<float>(grown))) scale_ = grown;  // the scale is float32 in torch
      growth_tracker_ = 0;
    }
  }
  unscaled_ = false;
  found_inf_ = false;
  stepped_or_checked_ = false;
}

Json LossScaler::state_dict() const {
  Json j = Json::object();
  if (!options_.enabled) return j;
  j["scale"] = scale_;
  j["growth_factor"] = options_.growth_factor;
  j["backoff_factor"] = options_.backoff_factor;
  j["growth_interval"] = options_.growth_interval;
  j["_growth_tracker"] = growth_tracker_;
  return j;
}

void LossScaler::load_state_dict(const Json& s) {
  if (!options_.enabled) return;
  if (!s.is_object() || !s.contains("scale") || !s.contains("_growth_tracker"))
    throw_checkpoint("loss scaler state lacks 'scale' or '_growth_tracker'", "scaler state",
                     "resume from a checkpoint written with --accelerator.mixed_precision=fp16");
  scale_ = s.at("scale").get<double>();
  growth_tracker_ = s.at("_growth_tracker").get<int64_t>();
  if (s.contains("growth_factor")) options_.growth_factor = s.at("growth_factor").get<double>();
  if (s.contains("backoff_factor")) options_.backoff_factor = s.at("backoff_factor").get<double>();
  if (s.contains("growth_interval")) options_.growth_interval = s.at("growth_interval").get<int64_t>();
}

}  // namespace lerobot
