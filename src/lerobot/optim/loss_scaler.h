// Dynamic loss scaling for fp16 training (torch.cuda.amp.GradScaler semantics), on any device.
#pragma once

#include <functional>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>

#include "lerobot/common/config/json.h"

namespace lerobot {

struct LossScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;  // disabled: scale() returns the loss, step() just steps
};

// Per iteration: scale(loss).backward(); [unscale_(opt); clip]; step(opt); update().
class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {});

  torch::Tensor scale(const torch::Tensor& loss) const;
  // Divides every gradient of `optimizer` by the scale and records whether any was NaN/Inf.
  // Idempotent within one iteration (a second call does nothing).
  void unscale_(torch::optim::Optimizer& optimizer);
  // Unscales if needed, then steps unless a non-finite gradient was found (`step_fn`, or
  // optimizer.step() when it is empty). Returns true when the optimizer stepped; a skipped step
  // increments skipped_steps().
  bool step(torch::optim::Optimizer& optimizer, const std::function<void()>& step_fn = nullptr);
  // Sharded runs: each process unscales only its shards' gradients, so whether any was non-finite
  // is decided over every process (`any_rank`: a collective every rank calls in unscale_), and
  // every process then skips, backs off or grows alike.
  void set_found_inf_reduction(std::function<bool(bool)> any_rank) { any_rank_ = std::move(any_rank); }
  // Backs off on overflow, grows after growth_interval clean steps; resets the per-iteration state.
  void update();

  bool enabled() const { return options_.enabled; }
  double get_scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  int64_t skipped_steps() const { return skipped_steps_; }
  bool found_inf() const { return found_inf_; }

  // {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"} as GradScaler.
  Json state_dict() const;
  void load_state_dict(const Json& state);

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
  bool unscaled_ = false;
  bool found_inf_ = false;
  bool stepped_or_checked_ = false;
  std::function<bool(bool)> any_rank_;
};

}  // namespace lerobot
