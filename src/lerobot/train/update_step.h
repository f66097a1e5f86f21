// One training step on one micro-batch, LeRobot's update_policy under accelerate: forward under
// autocast, backward (loss / accumulation steps, scaled under fp16) with the gradient all-reduce
// overlapped, then on accumulation boundaries: unscale, clip (reporting the pre-clip norm),
// optimizer step (skipped when the loss or gradients are not finite), zero grads. The scheduler
// steps every micro-batch.
//
// Host synchronisation: the loss, the policy's outputs and the grad norm stay on the device (the
// logger reads them once per log step). Whether to skip a non-finite step is decided on the
// device where the optimizer can (fused kernels with found_inf: no sync at all); otherwise it
// costs one read of one flag per synchronised step (under fp16 the loss scaler's check, as
// GradScaler's). Non-finite steps for `max_nonfinite_steps` in a row stop the run with an error
// naming the step (checked every step on the host path, at log steps on the device path).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "lerobot/policies/policy.h"

namespace lerobot {

struct TrainSetup;

struct UpdateResult {
  torch::Tensor loss;       // 0-d, detached, on the device
  torch::Tensor grad_norm;  // 0-d pre-clip norm on accumulation boundaries; undefined otherwise
  double lr = 0.0;          // read after the scheduler step, as LeRobot logs it
  double update_s = 0.0;
  bool synced = false;
  // Whether the optimizer step was skipped: known on the host (nullopt on micro-steps), or only
  // on the device (`skipped_on_device`, 0-d float 1/0) when the optimizer decided it there.
  std::optional<bool> skipped;
  torch::Tensor skipped_on_device;
  std::map<std::string, torch::Tensor> values;  // the policy's named outputs (l1_loss, kld_loss, ...)
};

class UpdateStep {
 public:
  explicit UpdateStep(TrainSetup& setup);
  UpdateResult run(const Batch& batch, int64_t step);
  // Device path: reads the count of consecutive skipped steps (one sync) and stops the run when it
  // reached max_nonfinite_steps. Call at log steps; a no-op on the host path.
  void check_nonfinite(int64_t step);

 private:
  std::string first_nonfinite_grad() const;
  void note_nonfinite(int64_t step, const std::string& what);
  [[noreturn]] void diverged(int64_t count, int64_t step, const std::string& what) const;

  TrainSetup& s_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  int64_t consecutive_nonfinite_ = 0;
  int64_t max_nonfinite_;
  bool skip_on_device_ = false;
  torch::Tensor consecutive_on_device_;  // 0-d float: skipped steps in a row (device path)
};

}  // namespace lerobot
