// EMA of the policy weights (see ema.h): the decay schedule, the multi-tensor update, and the
// diffusers-layout state file.
#include "lerobot/optim/ema.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_save.h"

namespace lerobot {

void EmaConfig::visit(FieldVisitor& v) {
  field(v, "enable", enable, "Keep an exponential moving average of the weights (saved as pretrained_model_ema/)");
  field(v, "decay", decay, "Constant decay at every step (replaces the warm-up schedule), e.g. 0.99");
  field(v, "update_after_step", update_after_step, "Optimizer steps during which the average is a copy of the weights");
  field(v, "inv_gamma", inv_gamma, "Warm-up schedule: decay = 1 - (1 + t/inv_gamma)^-power");
  field(v, "power", power, "Warm-up schedule exponent");
  field(v, "min_decay", min_decay, "Lower clamp of the scheduled decay");
  field(v, "max_decay", max_decay, "Upper clamp of the scheduled decay");
  field(v, "use_for_eval", use_for_eval, "Evaluate the averaged weights in --env.type evaluation during training");
}

void EmaConfig::validate() const {
  if (!(0.0 <= min_decay && min_decay <= max_decay && max_decay <= 1.0))
    throw_usage("expected 0 <= ema.min_decay <= ema.max_decay <= 1, got min_decay=" + std::to_string(min_decay) +
                    " and max_decay=" + std::to_string(max_decay),
                "ema.min_decay", "pass e.g. --ema.min_decay=0 --ema.max_decay=0.9999 (LeRobot's defaults)");
  if (!(inv_gamma > 0)) throw_usage("ema.inv_gamma must be positive, got " + std::to_string(inv_gamma), "ema.inv_gamma");
  if (!(power > 0)) throw_usage("ema.power must be positive, got " + std::to_string(power), "ema.power");
  if (update_after_step < 0)
    throw_usage("ema.update_after_step must be >= 0, got " + std::to_string(update_after_step), "ema.update_after_step");
  if (decay) {
    if (!(0.0 <= *decay && *decay <= 1.0))
      throw_usage("ema.decay must be in [0, 1], got " + std::to_string(*decay), "ema.decay");
    if (min_decay != 0.0 || max_decay != 0.9999)
      throw_usage("ema.decay (constant decay) and ema.min_decay/ema.max_decay (schedule clamp) are mutually exclusive",
                  "ema.decay", "set either --ema.decay or --ema.min_decay/--ema.max_decay");
  }
}

EmaSchedule EmaSchedule::from_config(const EmaConfig& cfg) {
  EmaSchedule s;
  s.max_decay = cfg.decay ? *cfg.decay : cfg.max_decay;
  s.min_decay = cfg.decay ? *cfg.decay : cfg.min_decay;
  s.update_after_step = cfg.update_after_step;
  s.inv_gamma = cfg.inv_gamma;
  s.power = cfg.power;
  return s;
}

double EmaSchedule::decay_at(int64_t optimization_step) const {
  const int64_t t = std::max<int64_t>(0, optimization_step - update_after_step - 1);
  if (t <= 0) return 0.0;  // a hard copy, before the clamps (diffusers)
  const double d = 1.0 - std::pow(1.0 + double(t) / inv_gamma, -power);
  return std::max(std::min(d, max_decay), min_decay);
}

EmaModel::EmaModel(const std::vector<torch::Tensor>& params, EmaSchedule schedule) : schedule_(schedule) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params) shadow_.push_back(p.detach().to(torch::kFloat32).clone());
}

void EmaModel::step(const std::vector<torch::Tensor>& params) {
  TORCH_CHECK(params.size() == shadow_.size(), "EMA: parameter count changed");
  torch::NoGradGuard no_grad;
  ++optimization_step_;
  last_decay_ = schedule_.decay_at(optimization_step_);
  const double one_minus_decay = 1.0 - last_decay_;
  std::vector<torch::Tensor> shadow, live;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].requires_grad()) {
      shadow.push_back(shadow_[i]);
      live.push_back(params[i].detach().to(torch::kFloat32));
    } else {
      shadow_[i].copy_(params[i].detach());  // frozen weights are copied, as diffusers does
    }
  }
  if (shadow.empty()) return;
  // shadow -= (1 - decay) * (shadow - param), diffusers' order of operations.
  auto diff = at::_foreach_sub(shadow, live);
  at::_foreach_mul_(diff, one_minus_decay);
  at::_foreach_sub_(shadow, diff);
}

void EmaModel::copy_to(const std::vector<torch::Tensor>& params) const {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size() && i < shadow_.size(); ++i) params[i].detach().copy_(shadow_[i]);
}

void EmaModel::save(const fs::path& file) const {
  // Plain dict and list, so torch.load(weights_only=True) takes it (as LeRobot loads it).
  torch_save_dict(file, {{"decay", schedule_.max_decay},
                         {"min_decay", schedule_.min_decay},
                         {"optimization_step", optimization_step_},
                         {"update_after_step", schedule_.update_after_step},
                         {"use_ema_warmup", true},
                         {"inv_gamma", schedule_.inv_gamma},
                         {"power", schedule_.power},
                         {"shadow_params", shadow_}});
}

void EmaModel::load(const fs::path& file) {
  const std::string fix = "resume from a checkpoint written with --ema.enable=true, or delete " + file.string() +
                          " to restart the average from the current weights";
  c10::IValue v;
  try {
    const std::string bytes = read_file(file, std::uintmax_t(1) << 40);
    v = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw_checkpoint("cannot read the EMA state: " + std::string(e.what()).substr(0, 200), file.string(), fix);
  }
  if (!v.isGenericDict()) throw_checkpoint("the EMA state is not a dict", file.string(), fix);
  auto d = v.toGenericDict();
  auto need = [&](const char* key) {
    if (!d.contains(key)) throw_checkpoint("the EMA state has no '" + std::string(key) + "'", file.string(), fix);
    return d.at(key);
  };
  auto number = [&](const char* key) {
    const auto x = need(key);
    if (x.isDouble()) return x.toDouble();
    if (x.isInt()) return double(x.toInt());
    throw_checkpoint("the EMA state's '" + std::string(key) + "' is not a number", file.string(), fix);
  };
  const auto list = need("shadow_params");
  if (!list.isList()) throw_checkpoint("the EMA state's shadow_params is not a list", file.string(), fix);
  const auto tensors = list.toList();
  if (tensors.size() != shadow_.size())
    throw_checkpoint("the EMA state holds " + std::to_string(tensors.size()) + " tensors, the policy has " +
                         std::to_string(shadow_.size()) + " parameters",
                     file.string(), fix);
  std::vector<torch::Tensor> loaded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const c10::IValue t = tensors.get(i);
    if (!t.isTensor() || t.toTensor().sizes() != shadow_[i].sizes())
      throw_checkpoint("EMA shadow tensor " + std::to_string(i) + " does not match the policy's parameter shape",
                       file.string(), fix);
    loaded.push_back(t.toTensor().to(shadow_[i].device(), torch::kFloat32).clone());
  }
  schedule_.max_decay = number("decay");
  schedule_.min_decay = number("min_decay");
  schedule_.update_after_step = int64_t(number("update_after_step"));
  schedule_.inv_gamma = number("inv_gamma");
  schedule_.power = number("power");
  optimization_step_ = int64_t(number("optimization_step"));
  shadow_ = std::move(loaded);
}

EmaWeightsScope::EmaWeightsScope(const EmaModel& ema, std::vector<torch::Tensor> params) : params_(std::move(params)) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params_) backup_.push_back(p.detach().clone());
  ema.copy_to(params_);
}

EmaWeightsScope::~EmaWeightsScope() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) params_[i].detach().copy_(backup_[i]);
}

}  // namespace lerobot
