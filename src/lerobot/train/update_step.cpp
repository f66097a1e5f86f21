// One micro-batch update (see update_step.h).
#include "lerobot/train/update_step.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/timer.h"
#include "lerobot/optim/grad_clip.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/train/autocast.h"
#include "lerobot/train/train_setup.h"

namespace lerobot {

UpdateStep::UpdateStep(TrainSetup& setup) : s_(setup), max_nonfinite_(setup.cfg.max_nonfinite_steps) {
  for (const auto& p : s_.policy->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    names_.push_back(p.key());
    params_.push_back(p.value());
  }
  // Under fp16 the loss scaler needs a few overflowing steps to find its scale.
  if (s_.scaler) max_nonfinite_ += 24;
  skip_on_device_ = !s_.scaler && can_skip_on_device(*s_.optimizer);
  if (skip_on_device_)
    consecutive_on_device_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(s_.device));
}

std::string UpdateStep::first_nonfinite_grad() const {
  const auto name = first_nonfinite_grad_name(params_, names_);
  return name ? "gradient of " + *name : "gradient";
}

void UpdateStep::diverged(int64_t count, int64_t step, const std::string& what) const {
  throw_runtime("training diverged: " + what + " was NaN/Inf for " + std::to_string(count) +
                    " consecutive steps, the last at step " + std::to_string(step),
                "step " + std::to_string(step),
                "lower --policy.optimizer_lr (or --optimizer.lr), check the dataset stats for zero std, or "
                "use --accelerator.mixed_precision=bf16 instead of fp16");
}

void UpdateStep::note_nonfinite(int64_t step, const std::string& what) {
  ++consecutive_nonfinite_;
  LOG_WARNING << "step " << step << ": non-finite " << what << " (" << consecutive_nonfinite_ << " in a row)";
  if (consecutive_nonfinite_ >= max_nonfinite_) diverged(consecutive_nonfinite_, step, what);
}

void UpdateStep::check_nonfinite(int64_t step) {
  if (!skip_on_device_) return;
  const auto count = static_cast<int64_t>(consecutive_on_device_.item<float>());
  if (count >= max_nonfinite_) diverged(count, step, "the loss or the gradients");
}

UpdateResult UpdateStep::run(const Batch& batch, int64_t step) {
  Stopwatch timer;
  const auto& acc = s_.cfg.accelerator;
  const int64_t accum = acc.gradient_accumulation.steps;
  UpdateResult r;
  r.synced = (step + 1) % accum == 0;
  if (s_.reducer) s_.reducer->set_sync(r.synced);  // null with --distributed.reduce_gradients=false
  if (s_.world_size() > 1) broadcast_buffers(*s_.policy, *s_.group);  // DDP's broadcast_buffers=True, before each forward

  PolicyOutput out;
  {
    AutocastScope autocast(acc.mixed_precision, s_.device);
    out = s_.policy->forward(batch);
  }
  r.loss = out.loss.detach();
  r.values = std::move(out.values);
  torch::Tensor loss = out.loss.to(torch::kFloat32) / static_cast<double>(accum);
  if (s_.scaler) loss = s_.scaler->scale(loss);
  loss.backward();

  if (r.synced) {
    if (s_.reducer) s_.reducer->synchronize();  // gradients are now averaged over ranks
    if (s_.scaler) s_.scaler->unscale_(*s_.optimizer);
    const double max_norm = s_.cfg.optimizer->grad_clip_norm;
    r.grad_norm = max_norm > 0 ? clip_grad_norm_(params_, max_norm) : total_grad_norm(params_);
    // A non-finite loss of an earlier micro-step reaches the gradients, so this covers them too.
    const torch::Tensor finite = torch::isfinite(r.loss) & torch::isfinite(r.grad_norm);
    if (skip_on_device_) {
      const torch::Tensor skip = finite.logical_not().to(torch::kFloat32);
      step_unless(*s_.optimizer, skip);
      consecutive_on_device_.add_(1.0).mul_(skip);  // back to 0 after a finite step
      r.skipped_on_device = skip;
    } else if (s_.scaler) {
      if (finite.item<bool>() && !s_.scaler->found_inf()) {  // the scaler's check, as GradScaler's
        r.skipped = !s_.scaler->step(*s_.optimizer);
        consecutive_nonfinite_ = 0;
      } else {
        r.skipped = true;
        note_nonfinite(step, !std::isfinite(r.loss.item<double>())
                                 ? "loss"
                                 : "fp16 gradients (loss scale " + std::to_string(s_.scaler->get_scale()) +
                                       ", step skipped)");
      }
      s_.scaler->update();
    } else if (finite.item<bool>()) {  // the one host read of the step
      r.skipped = false;
      s_.optimizer->step();
      consecutive_nonfinite_ = 0;
    } else {
      r.skipped = true;
      note_nonfinite(step, std::isfinite(r.loss.item<double>()) ? first_nonfinite_grad() : "loss");
    }
    s_.optimizer->zero_grad();
  }
  if (s_.scheduler) s_.scheduler->step();  // every micro-batch, as LeRobot (step_scheduler_with_optimizer=False)
  r.lr = s_.optimizer->param_groups()[0].options().get_lr();
  r.update_s = timer.seconds();
  return r;
}

}  // namespace lerobot
