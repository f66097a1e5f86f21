// One micro-batch update (see update_step.h).
#include "lerobot/train/update_step.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/timer.h"
#include "lerobot/distributed/sharded_params.h"
#include "lerobot/optim/grad_clip.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/train/autocast.h"
#include "lerobot/train/train_setup.h"

namespace lerobot {

UpdateStepParts update_step_parts(TrainSetup& s) {
  UpdateStepParts p;
  p.policy = s.policy.get();
  p.optimizer = s.optimizer.get();
  p.scheduler = s.scheduler.get();
  p.scaler = s.scaler.get();
  p.reducer = s.reducer.get();  // null with --distributed.reduce_gradients=false
  p.unit_runner = s.sharded ? s.sharded->runner() : s.checkpoint_runner.get();  // sharding calls checkpointing inside
  p.sharded = s.sharded ? &s.sharded->params() : nullptr;
  p.group = s.world_size() > 1 ? s.group.get() : nullptr;
  p.device = s.device;
  p.mixed_precision = s.cfg.accelerator.mixed_precision;
  p.accumulation_steps = s.cfg.accelerator.gradient_accumulation.steps;
  p.grad_clip_norm = s.cfg.optimizer->grad_clip_norm;
  p.max_nonfinite_steps = s.cfg.max_nonfinite_steps;
  return p;
}

UpdateStep::UpdateStep(const UpdateStepParts& parts) : p_(parts), max_nonfinite_(parts.max_nonfinite_steps) {
  if (!p_.policy || !p_.optimizer) throw_runtime("UpdateStep needs a policy and an optimizer");
  if (p_.sharded) {  // the tensors the optimizer steps
    names_ = p_.sharded->trainable_shard_names();
    params_ = p_.sharded->trainable_shards();
  } else {
    for (const auto& p : p_.policy->named_parameters()) {
      if (!p.value().requires_grad()) continue;
      names_.push_back(p.key());
      params_.push_back(p.value());
    }
  }
  // Under fp16 the loss scaler needs a few overflowing steps to find its scale.
  if (p_.scaler) max_nonfinite_ += 24;
  skip_on_device_ = !p_.scaler && can_skip_on_device(*p_.optimizer);
  if (skip_on_device_)
    consecutive_on_device_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(p_.device));
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
  UpdateResult r;
  r.synced = (step + 1) % p_.accumulation_steps == 0;
  if (p_.reducer) p_.reducer->set_sync(r.synced);
  forward_backward(batch, r);
  if (r.synced) clip_and_step(step, r);
  finish(r);
  r.update_s = timer.seconds();
  return r;
}

void UpdateStep::finish(UpdateResult& r) {
  if (p_.scheduler) p_.scheduler->step();  // every micro-batch, as LeRobot (step_scheduler_with_optimizer=False)
  r.lr = p_.optimizer->param_groups()[0].options().get_lr();
}

void UpdateStep::forward_backward(const Batch& batch, UpdateResult& r) {
  if (p_.group) broadcast_buffers(*p_.policy, *p_.group);  // DDP's broadcast_buffers=True, before each forward
  if (p_.sharded) {
    p_.sharded->set_sync(r.synced);
    p_.sharded->begin_forward();  // the root unit gathered; each unit is gathered around its forward
  }
  PolicyOutput out;
  {
    AutocastScope autocast(p_.mixed_precision, p_.device);
    UnitRunnerScope units(p_.unit_runner);
    out = p_.policy->forward(batch);
  }
  r.loss = out.loss.detach();
  r.values = std::move(out.values);
  torch::Tensor loss = out.loss.to(torch::kFloat32) / static_cast<double>(p_.accumulation_steps);
  if (p_.scaler) loss = p_.scaler->scale(loss);
  loss.backward();
  if (p_.sharded) p_.sharded->end_backward(r.synced);  // the shards' gradients, averaged over ranks
}

void UpdateStep::step_shards(const std::function<void()>& step) {
  // cpu_offload: the host steps unit by unit, each unit's copy to the device queued as it is done.
  if (p_.sharded) p_.sharded->step_offloaded(step);
  else step();
}

void UpdateStep::clip_and_step(int64_t step, UpdateResult& r) {
  if (p_.reducer) p_.reducer->synchronize();  // gradients are now averaged over ranks
  if (p_.scaler) p_.scaler->unscale_(*p_.optimizer);
  if (p_.sharded)  // the norm over every rank's shards (one all-reduce)
    r.grad_norm = p_.sharded->clip_grad_norm_(p_.grad_clip_norm);
  else
    r.grad_norm = p_.grad_clip_norm > 0 ? clip_grad_norm_(params_, p_.grad_clip_norm) : total_grad_norm(params_);
  // A non-finite loss of an earlier micro-step reaches the gradients, so this covers them too. With
  // several processes only the all-reduced gradients decide: every rank sees the same norm, while a
  // rank's own loss could stop it alone and the replicas would drift apart.
  const torch::Tensor finite =
      p_.group ? torch::isfinite(r.grad_norm) : torch::isfinite(r.loss) & torch::isfinite(r.grad_norm);
  if (skip_on_device_) {
    const torch::Tensor skip = finite.logical_not().to(torch::kFloat32);
    step_shards([&] { step_unless(*p_.optimizer, skip); });
    consecutive_on_device_.add_(1.0).mul_(skip);  // back to 0 after a finite step
    r.skipped_on_device = skip;
  } else if (p_.scaler) {
    if (finite.item<bool>() && !p_.scaler->found_inf()) {  // the scaler's check, as GradScaler's
      r.skipped = !p_.scaler->step(*p_.optimizer, [&] { step_shards([&] { p_.optimizer->step(); }); });
      consecutive_nonfinite_ = 0;
    } else {
      r.skipped = true;
      note_nonfinite(step, !std::isfinite(r.loss.item<double>())
                               ? "loss"
                               : "fp16 gradients (loss scale " + std::to_string(p_.scaler->get_scale()) +
                                     ", step skipped)");
    }
    p_.scaler->update();
  } else if (finite.item<bool>()) {  // the one host read of the step
    r.skipped = false;
    step_shards([&] { p_.optimizer->step(); });
    consecutive_nonfinite_ = 0;
  } else {
    r.skipped = true;
    note_nonfinite(step, std::isfinite(r.loss.item<double>()) ? first_nonfinite_grad() : "loss");
  }
  zero_grad_to_none(*p_.optimizer);
}

}  // namespace lerobot
