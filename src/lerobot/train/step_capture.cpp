// Whole-step CUDA graphs (see step_capture.h).
#include "lerobot/train/step_capture.h"

#include "lerobot/common/device_graph.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/timer.h"
#include "lerobot/distributed/grad_reducer.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/optimizer.h"

namespace lerobot {

StepCaptureFacts step_capture_facts(const UpdateStepParts& parts, const UpdateStep& step, bool enabled,
                                    int world_size) {
  StepCaptureFacts f;
  f.enabled = enabled;
  f.device = parts.device.str();
  f.graphs_available = DeviceGraph::available(parts.device);
  f.world_size = world_size;
  f.accumulation_steps = parts.accumulation_steps;
  f.fp16_loss_scaling = parts.scaler != nullptr;
  f.skips_on_device = step.skips_on_device();
  f.lr_schedule = parts.scheduler != nullptr;
  f.lr_on_device = parts.optimizer != nullptr && can_take_lr_on_device(*parts.optimizer);
  if (parts.policy) f.policy_blocker = parts.policy->graph_capture_blocker();
  // Activation checkpointing saves and sets the generators' states on the host around every unit
  // and its recomputation, which a replayed graph would not redo.
  if (f.policy_blocker.empty() && parts.unit_runner)
    f.policy_blocker = "units run through a unit runner (activation checkpointing keeps RNG states on the host)";
  return f;
}

StepCapturePlan plan_step_capture(const StepCaptureFacts& f) {
  auto eager = [](std::string why) { return StepCapturePlan{false, std::move(why)}; };
  if (!f.enabled) return eager("--cuda.graphs=false");
  if (!f.graphs_available)
    return eager("the policy is on " + f.device + " (CUDA graphs need a CUDA device and a CUDA build of LibTorch 2.x)");
  if (f.world_size > 1)
    return eager(std::to_string(f.world_size) + " processes: the gradient all-reduce is not captured yet");
  if (f.accumulation_steps > 1)
    return eager("gradient accumulation (--accelerator.gradient_accumulation.steps=" +
                 std::to_string(f.accumulation_steps) + ")");
  if (f.fp16_loss_scaling)
    return eager("fp16 loss scaling decides its scale on the host (bf16 is captured)");
  if (!f.skips_on_device)
    return eager("the optimizer cannot skip a non-finite step on the device (that needs the fused Adam/AdamW "
                 "kernels: Adam or AdamW with --optimizer_impl=auto or fused)");
  if (f.lr_schedule && !f.lr_on_device)
    return eager("a learning-rate schedule changes the lr every step and this LibTorch's fused kernels take it as "
                 "a number (the tensor-lr kernels need 2.4+)");
  if (!f.policy_blocker.empty()) return eager(f.policy_blocker);
  return {true, ""};
}

CapturedUpdateStep::CapturedUpdateStep(UpdateStep& step, const UpdateStepParts& parts, StepCapturePlan plan,
                                       int64_t warmup_steps)
    : step_(step), parts_(parts), plan_(std::move(plan)), warmup_steps_(warmup_steps) {
  // A scheduled lr reaches the captured kernels through the device (refreshed before every step).
  device_lr_ = plan_.capture && parts_.scheduler != nullptr;
  if (plan_.capture && parts_.policy) parts_.policy->set_device_side_randomness(true);
}

CapturedUpdateStep::~CapturedUpdateStep() = default;

void CapturedUpdateStep::use_static_buffers_without_capture() {
  buffers_only_ = true;
  device_lr_ = parts_.scheduler != nullptr && can_take_lr_on_device(*parts_.optimizer);
  if (parts_.policy) parts_.policy->set_device_side_randomness(true);
}

bool CapturedUpdateStep::replaying() const { return graph_ && graph_->captured(); }

UpdateResult CapturedUpdateStep::run_device_part(const Batch& batch, int64_t step) {
  UpdateResult r;
  r.synced = (step + 1) % parts_.accumulation_steps == 0;
  if (parts_.reducer) parts_.reducer->set_sync(r.synced);
  step_.forward_backward(batch, r);
  if (r.synced) step_.clip_and_step(step, r);
  return r;
}

UpdateResult CapturedUpdateStep::eager(const Batch& batch, int64_t step) { return step_.run(batch, step); }

UpdateResult CapturedUpdateStep::run(const Batch& batch, int64_t step) {
  if (device_lr_) refresh_device_lr(*parts_.optimizer);  // the lr the scheduler set after the last step
  if (!plan_.capture && !buffers_only_) return eager(batch, step);
  Stopwatch timer;
  ++steps_seen_;
  std::string difference;
  if (inputs_.initialized() && !inputs_.matches(batch, &difference)) {
    if (!reported_shape_change_)
      LOG_INFO << "step " << step << ": " << difference << "; such steps run without the CUDA graph";
    reported_shape_change_ = true;
    return eager(batch, step);
  }
  auto finish = [&](UpdateResult r) {
    step_.finish(r);
    r.update_s = timer.seconds();
    return r;
  };
  if (buffers_only_) {  // the CPU check: static buffers and static results, nothing captured
    if (!inputs_.initialized()) inputs_.init(batch);
    else inputs_.copy_from(batch);
    return finish(run_device_part(inputs_.buffers(), step));
  }
  if (replaying()) {
    inputs_.copy_from(batch);
    graph_->replay();
    return finish(outputs_);  // the same tensors every step: the logger adds them up as they come
  }
  if (!graph_) graph_ = std::make_unique<DeviceGraph>(parts_.device);
  // A short batch (the epoch's last, with one process) is not the shape to capture: it warms up too.
  const int64_t rows = batch.empty() || batch.begin()->second.dim() == 0 ? 0 : batch.begin()->second.size(0);
  full_rows_ = std::max(full_rows_, rows);
  if (steps_seen_ <= warmup_steps_ || rows < full_rows_) {  // eager, on the stream the capture will use
    UpdateResult r;
    graph_->run_on_side_stream([&] { r = step_.run(batch, step); });
    r.update_s = timer.seconds();
    return r;
  }
  // This step is captured (recorded, not run), then replayed.
  inputs_.init(batch);
  try {
    graph_->capture([&] { outputs_ = run_device_part(inputs_.buffers(), step); });
  } catch (const std::exception& e) {
    // LibTorch's errors carry a C++ backtrace in what(): the log gets the message alone.
    const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
    const std::string why = torch_error ? torch_error->what_without_backtrace() : e.what();
    LOG_WARNING << "CUDA graph capture failed at step " << step << " (" << why << "); training goes on without graphs";
    plan_ = {false, "the capture failed: " + why};
    zero_grad_to_none(*parts_.optimizer);  // gradients the failed capture may have left behind
    graph_.reset();
    outputs_ = UpdateResult{};
    inputs_ = StaticBatch{};
    return eager(batch, step);
  }
  LOG_INFO << "CUDA graph captured at step " << step << " after " << warmup_steps_
           << " warm-up steps: every step is now one replay";
  graph_->replay();
  return finish(outputs_);
}

}  // namespace lerobot
