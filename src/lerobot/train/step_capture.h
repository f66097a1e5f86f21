// Whole-step CUDA graphs (--cuda.graphs, on by default): after a few eager warm-up steps on a side
// stream, one update (forward, backward, clip, the optimizer step with its device-side skip of
// non-finite steps) is captured into a graph and every later step is one replay: the batch is
// copied into static input buffers and the captured kernels run again, with no per-kernel launch
// cost on the host. The scheduler, lr read-out and EMA stay on the host, outside the graph.
//
// Capture is used only where it is safe (plan_step_capture): a CUDA build and device, one process,
// no gradient accumulation, no fp16 loss scaling, an optimizer that skips non-finite steps on the
// device (the fused Adam/AdamW kernels), a learning rate that is constant or that the kernels read
// from the device (LibTorch 2.4+: the host writes the scheduler's lr there before every replay), and
// a policy whose step decides nothing on the host (Policy::graph_capture_blocker; a captured step
// switches the policy to device-side randomness first, so Diffusion's random crop draws its offsets
// on the device, from the CUDA generator rather than LeRobot's CPU one). Otherwise the step
// runs eagerly and the log says why once. A batch whose shapes differ from the captured ones (a short last
// batch) runs eagerly; a capture CUDA refuses (a host synchronisation inside the step) is logged
// and the run goes on eagerly.
#pragma once

#include <memory>
#include <string>

#include "lerobot/common/static_batch.h"
#include "lerobot/train/update_step.h"

namespace lerobot {

class DeviceGraph;

// The facts plan_step_capture decides on; step_capture_facts() reads them from a run's parts.
struct StepCaptureFacts {
  bool enabled = true;          // --cuda.graphs
  bool graphs_available = false;  // CUDA build (2.x) and the policy on a CUDA device
  std::string device = "cpu";
  int world_size = 1;
  int64_t accumulation_steps = 1;
  bool fp16_loss_scaling = false;
  bool skips_on_device = false;  // the optimizer decides a non-finite step's skip on the device
  bool lr_schedule = false;      // a scheduler changes the lr between steps
  bool lr_on_device = false;     // the fused kernels can read the lr from the device (tensor lr)
  std::string policy_blocker;    // Policy::graph_capture_blocker()
};
StepCaptureFacts step_capture_facts(const UpdateStepParts& parts, const UpdateStep& step, bool enabled,
                                    int world_size);

struct StepCapturePlan {
  bool capture = false;
  std::string why_not;  // empty when capture
};
StepCapturePlan plan_step_capture(const StepCaptureFacts& facts);

class CapturedUpdateStep {
 public:
  // `step` must outlive this. With plan.capture false every call is step.run().
  CapturedUpdateStep(UpdateStep& step, const UpdateStepParts& parts, StepCapturePlan plan, int64_t warmup_steps = 3);
  ~CapturedUpdateStep();
  UpdateResult run(const Batch& batch, int64_t step);
  const StepCapturePlan& plan() const { return plan_; }
  bool replaying() const;

  // For the CPU test of everything but the capture itself: every step goes through the static
  // input buffers and the static-result bookkeeping, run eagerly; a scheduled lr goes through the
  // device lr where the optimizer has it (the fused kernels, 2.4+).
  void use_static_buffers_without_capture();

 private:
  UpdateResult run_device_part(const Batch& batch, int64_t step);
  UpdateResult eager(const Batch& batch, int64_t step);

  UpdateStep& step_;
  UpdateStepParts parts_;
  StepCapturePlan plan_;
  bool device_lr_ = false;  // the captured optimizer reads a scheduled lr from the device
  int64_t warmup_steps_;
  int64_t steps_seen_ = 0;
  int64_t full_rows_ = 0;  // the largest batch seen before the capture: the one captured
  bool buffers_only_ = false;
  bool reported_shape_change_ = false;
  StaticBatch inputs_;
  UpdateResult outputs_;  // the captured step's result tensors, refilled by every replay
  std::unique_ptr<DeviceGraph> graph_;
};

}  // namespace lerobot
