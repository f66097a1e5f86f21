// Learning-rate schedulers as torch LambdaLR equivalents (LeRobot's optim/schedulers.py and
// diffusers' get_scheduler), with scheduler_state.json in torch's LambdaLR.state_dict() layout.
#pragma once

#include <torch/optim/optimizer.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/common/fs.h"
#include "lerobot/optim/optimizer_config.h"

namespace lerobot {

using LrLambda = std::function<double(int64_t step)>;

// diffusers' schedules as get_scheduler builds them: "constant", "constant_with_warmup", "linear",
// "cosine" (half cycle), "cosine_with_restarts" (one hard cycle), "polynomial" (power 1 to lr_end
// 1e-7, relative to `lr_init`, the optimizer's lr).
LrLambda diffusers_lambda(const std::string& name, int64_t num_warmup_steps,
                          int64_t num_training_steps, double lr_init = 0.0);
// pi0's warm-up from peak/(W+1) to peak, then cosine to decay_lr/peak_lr (as a factor of base lr).
// Auto-scales warm-up/decay when num_training_steps < num_decay_steps, as LeRobot does.
LrLambda cosine_decay_with_warmup_lambda(const CosineDecayWithWarmupSchedulerConfig& c,
                                         int64_t num_training_steps);

// VQ-BeT's schedule (LeRobot's VQBeTSchedulerConfig).
LrLambda vqbet_lambda(int64_t num_vqvae_training_steps, int64_t num_warmup_steps, double num_cycles,
                      int64_t num_training_steps);
// Linear warm-up then 1 (LeRobot's ConstantWithWarmupSchedulerConfig).
LrLambda constant_with_warmup_lambda(int64_t num_warmup_steps);
// Linear warm-up then a half cosine to 0 at num_training_steps (CosineAnnealingWithWarmupSchedulerConfig).
LrLambda cosine_annealing_with_warmup_lambda(int64_t num_warmup_steps, int64_t num_training_steps);

// Which torch release's LambdaLR attribute set scheduler_state.json is written with.
// 2.7 and 2.8: base_lrs, last_epoch, _step_count, _get_lr_called_within_step, _last_lr,
// lr_lambdas. 2.2-2.6 add "verbose"; 2.9+ adds "_is_initial". LeRobot 0.6 wants torch 2.7-2.11
// and loads the file with a strict key check: the default is the reader's format
// (compat::kWritesTorch27StateFormat says which).
enum class TorchStateFormat { kTorch2_2, kTorch2_7, kTorch2_9 };
constexpr TorchStateFormat kDefaultTorchStateFormat =
    compat::kWritesTorch27StateFormat ? TorchStateFormat::kTorch2_7 : TorchStateFormat::kTorch2_9;

// One λ shared by every param group (LeRobot passes a single function).
class Scheduler {
 public:
  // Records each group's current lr as base lr (torch's initial_lr) and takes the initial step:
  // last_epoch = 0, lr = base × λ(0).
  Scheduler(torch::optim::Optimizer& optimizer, LrLambda lambda);

  // Advances last_epoch and sets every group's lr = base_lr × λ(last_epoch).
  void step();
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  int64_t step_count() const { return step_count_; }

  Json state_dict(TorchStateFormat format = kDefaultTorchStateFormat) const;
  // Restores base_lrs, last_epoch, _step_count and _last_lr (like torch, it does not touch the
  // optimizer's lr: that comes from optimizer_param_groups.json). Extra torch keys are accepted.
  void load_state_dict(const Json& state, const std::string& where = "scheduler_state.json");

  void save(const fs::path& path, TorchStateFormat format = kDefaultTorchStateFormat) const;
  void load(const fs::path& path);

 private:
  torch::optim::Optimizer& optimizer_;
  LrLambda lambda_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
};

// Builds the scheduler a SchedulerConfig describes over `num_training_steps` (--steps); null
// config → null scheduler.
std::unique_ptr<Scheduler> make_scheduler(const SchedulerConfig* config,
                                          torch::optim::Optimizer& optimizer,
                                          int64_t num_training_steps);

// The number of steps over which a schedule warms up or decays (0 if none), for the
// "decay would never finish" warning.
int64_t scheduler_horizon_steps(const SchedulerConfig& config);

}  // namespace lerobot
