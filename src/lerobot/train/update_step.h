// One training step on one micro-batch, LeRobot's update_policy under accelerate: forward under
// autocast, backward (loss / accumulation steps, scaled under fp16) with the gradient all-reduce
// overlapped, then on accumulation boundaries: unscale, clip (reporting the pre-clip norm),
// optimizer step (skipped on fp16 overflow), zero grads. The scheduler steps every micro-batch.
// Non-finite losses or gradients for `max_nonfinite_steps` consecutive steps stop the run with
// an error naming the step and the first non-finite tensor.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "lerobot/policies/policy.h"

namespace lerobot {

struct TrainSetup;

struct UpdateResult {
  double loss = 0.0;
  std::optional<double> grad_norm;  // on accumulation boundaries only
  double lr = 0.0;                  // read after the scheduler step, as LeRobot logs it
  double update_s = 0.0;
  bool synced = false;
  bool skipped = false;             // fp16 overflow or non-finite gradients: no optimizer step
  std::map<std::string, double> values;  // the policy's named outputs (l1_loss, kld_loss, ...)
};

class UpdateStep {
 public:
  explicit UpdateStep(TrainSetup& setup);
  UpdateResult run(const Batch& batch, int64_t step);
  int64_t skipped_steps() const { return skipped_total_; }

 private:
  std::string first_nonfinite_grad() const;
  void note_nonfinite(int64_t step, const std::string& what);

  TrainSetup& s_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  int64_t consecutive_nonfinite_ = 0;
  int64_t skipped_total_ = 0;
  int64_t max_nonfinite_;
};

}  // namespace lerobot
