// Exponential moving average of the policy weights (--ema.*), as LeRobot 0.6 runs it: diffusers'
// EMAModel with use_ema_warmup, decay_t = 1 - (1 + t / inv_gamma)^-power clamped to
// [min_decay, max_decay], t = optimization_step - update_after_step - 1, and 0 (a hard copy) while
// t <= 0; a constant --ema.decay pins both clamps to it. Update: shadow -= (1 - decay) (shadow - param),
// as _foreach_ ops over all parameters. State in diffusers' state_dict layout (ema_state.pt,
// torch.save's format: common/torch_save.h).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "lerobot/common/config/config.h"
#include "lerobot/common/fs.h"

namespace lerobot {

// LeRobot 0.6's EMAConfig (configs/default.py).
struct EmaConfig : Config {
  bool enable = false;
  std::optional<double> decay;  // constant decay; replaces the warm-up schedule
  int64_t update_after_step = 0;
  double inv_gamma = 1.0;
  double power = 0.75;
  double min_decay = 0.0;
  double max_decay = 0.9999;
  bool use_for_eval = true;
  void visit(FieldVisitor& v) override;
  void validate() const override;
};

struct EmaSchedule {
  double max_decay = 0.9999;  // diffusers' `decay`
  double min_decay = 0.0;
  int64_t update_after_step = 0;
  double inv_gamma = 1.0;
  double power = 0.75;
  static EmaSchedule from_config(const EmaConfig& cfg);  // constant decay: min = max = decay
  // The decay used by the optimization_step-th update (1-based, as diffusers counts).
  double decay_at(int64_t optimization_step) const;
};

class EmaModel {
 public:
  // The shadow starts as an fp32 copy of `params` (their current values).
  EmaModel(const std::vector<torch::Tensor>& params, EmaSchedule schedule);

  // One optimizer step's update from the live parameters (same order as at construction).
  void step(const std::vector<torch::Tensor>& params);
  // Copies the shadow into `params` (which keep their dtype and device).
  void copy_to(const std::vector<torch::Tensor>& params) const;

  int64_t optimization_step() const { return optimization_step_; }
  double last_decay() const { return last_decay_; }
  const std::vector<torch::Tensor>& shadow() const { return shadow_; }
  const EmaSchedule& schedule() const { return schedule_; }

  // diffusers' EMAModel.state_dict() pickled as torch.save writes it ({decay, min_decay,
  // optimization_step, update_after_step, use_ema_warmup, inv_gamma, power, shadow_params}).
  void save(const fs::path& file) const;
  // Restores the step, schedule and shadow; a file that does not match the policy is a
  // checkpoint error naming it.
  void load(const fs::path& file);

 private:
  EmaSchedule schedule_;
  std::vector<torch::Tensor> shadow_;
  int64_t optimization_step_ = 0;
  double last_decay_ = 0.0;
};

// Swaps the EMA weights into `params` for the scope (evaluation, saving pretrained_model_ema/),
// then puts the live weights back exactly.
class EmaWeightsScope {
 public:
  EmaWeightsScope(const EmaModel& ema, std::vector<torch::Tensor> params);
  ~EmaWeightsScope();
  EmaWeightsScope(const EmaWeightsScope&) = delete;
  EmaWeightsScope& operator=(const EmaWeightsScope&) = delete;

 private:
  std::vector<torch::Tensor> params_, backup_;
};

}  // namespace lerobot
