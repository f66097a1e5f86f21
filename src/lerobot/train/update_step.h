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

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"

namespace lerobot {

class GradReducer;
class ShardedParameters;
class LossScaler;
class ProcessGroup;
class Scheduler;
struct TrainSetup;

// What one update needs and nothing of the run around it (dataset, loader, output dir), so a
// benchmark or a test can build a step on its own. Null pointers: not used (no scheduler, no loss
// scaler, one process).
struct UpdateStepParts {
  Policy* policy = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  Scheduler* scheduler = nullptr;
  LossScaler* scaler = nullptr;
  GradReducer* reducer = nullptr;
  UnitRunner* unit_runner = nullptr;  // installed around the training forward (unit_runner.h)
  // Sharded data parallel (sharded_params.h): gathers around the forward, reduce-scatters in
  // backward, clips over all shards; the optimizer steps the shards. Null: not sharded.
  ShardedParameters* sharded = nullptr;
  ProcessGroup* group = nullptr;  // for the buffer broadcast before each forward when > 1 process
  torch::Device device{torch::kCPU};
  std::string mixed_precision = "no";  // --accelerator.mixed_precision
  int64_t accumulation_steps = 1;      // --accelerator.gradient_accumulation.steps
  double grad_clip_norm = 0.0;         // 0: no clipping (the norm is still reported)
  int64_t max_nonfinite_steps = 1;
};
// The parts of a run made by make_train_setup.
UpdateStepParts update_step_parts(TrainSetup& setup);

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
  explicit UpdateStep(const UpdateStepParts& parts);
  // forward_backward, then on accumulation boundaries clip_and_step; then the scheduler.
  UpdateResult run(const Batch& batch, int64_t step);
  // The parts of run(), public so that each can be measured alone (bench/step_ops, tests).
  void forward_backward(const Batch& batch, UpdateResult& r);
  void clip_and_step(int64_t step, UpdateResult& r);
  // The optimizer's step (`step`), through the sharded parameters when there are (cpu_offload:
  // unit by unit, see ShardedParameters::step_offloaded).
  void step_shards(const std::function<void()>& step);
  // The host part after the device work: the scheduler steps and r.lr is read.
  void finish(UpdateResult& r);
  // Device path: reads the count of consecutive skipped steps (one sync) and stops the run when it
  // reached max_nonfinite_steps. Call at log steps; a no-op on the host path.
  void check_nonfinite(int64_t step);
  const std::vector<torch::Tensor>& params() const { return params_; }
  // Whether a non-finite step is skipped on the device (no host read in the step).
  bool skips_on_device() const { return skip_on_device_; }

 private:
  std::string first_nonfinite_grad() const;
  void note_nonfinite(int64_t step, const std::string& what);
  [[noreturn]] void diverged(int64_t count, int64_t step, const std::string& what) const;

  UpdateStepParts p_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  int64_t consecutive_nonfinite_ = 0;
  int64_t max_nonfinite_;
  bool skip_on_device_ = false;
  torch::Tensor consecutive_on_device_;  // 0-d float: skipped steps in a row (device path)
};

}  // namespace lerobot
