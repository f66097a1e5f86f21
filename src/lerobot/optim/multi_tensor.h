// Multi-tensor optimizer steps: torch::optim's Adam, AdamW and SGD with step() done by ATen's
// _foreach_* ops over whole parameter groups (about ten ops per group instead of about ten per
// tensor: 234 tensors in ACT), or on CUDA with LibTorch >= 2.1 by the fused Adam/AdamW kernels
// (torch.optim's foreach=True / fused=True). The math and its order are torch::optim's, so the
// foreach step is bit-identical to the per-tensor one on CPU, and the state objects are the same
// (AdamParamState, AdamWParamState, SGDParamState): checkpoints and optimizer_kind() are unchanged.
#pragma once

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lerobot {

// How an optimizer step runs. kAuto: fused on CUDA where the LibTorch has the kernels, else foreach.
enum class OptimizerImpl { kAuto, kFused, kForeach, kPerTensor };

// "auto", "fused", "foreach", "per_tensor" (a usage error naming --optimizer_impl otherwise).
OptimizerImpl parse_optimizer_impl(const std::string& name);
const char* optimizer_impl_name(OptimizerImpl impl);

// Fused kernels exist for Adam/AdamW on this LibTorch and `device` (CUDA: 2.1+; CPU: 2.4+).
bool fused_adam_available(const c10::Device& device);
// ... and they can read the lr from a tensor on `device` (2.4+), so a captured step follows a schedule.
bool fused_adam_tensor_lr_available(const c10::Device& device);

// Float32 step counters on the parameters' device, as the fused kernels want them. The int64
// step in the torch::optim state advances with every step() on the host; a step the kernels skip
// on the device (found_inf) leaves the device counter behind, which is the step that counts (as in
// torch.optim). sync_to_host() writes the device counts into the state (before a checkpoint); a
// state step set from outside (a loaded checkpoint) is copied to the device on the next step.
class FusedStepCounters {
 public:
  // The counter of parameter `key`, refilled from `host_step` when the host step was set from
  // outside since the last call.
  at::Tensor& at_step(const void* key, const at::Tensor& param, int64_t host_step);
  // The host step of `key` moved on by one together with its device counter.
  void advanced(const void* key) { ++entries_[key].host_step; }
  // Device counts → host steps (one device read for all), through `set_host_step(key, step)`.
  void sync_to_host(const std::function<void(const void*, int64_t)>& set_host_step);

 private:
  struct Entry {
    at::Tensor tensor;
    int64_t host_step = -1;  // the host step this counter was last aligned with
  };
  std::map<const void*, Entry> entries_;
};

// What the fused Adam and AdamW share: the counters, the device-side skip and the device lr.
struct FusedAdamExtras {
  FusedStepCounters steps;
  at::Tensor found_inf;  // set for one step by step_unless()
  // Set by refresh_device_lr(): the kernels read each group's lr from these 0-d float32 tensors
  // (one per param group) instead of taking it as a number.
  std::vector<at::Tensor> group_lr;
};

// torch::optim::Adam (L2 weight decay) or AdamW (decoupled) with the multi-tensor or fused step.
template <class Base, class Options, class State, bool kDecoupledWeightDecay>
class MultiTensorAdamOf : public Base {
 public:
  MultiTensorAdamOf(std::vector<torch::optim::OptimizerParamGroup> groups, Options defaults, OptimizerImpl impl);
  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;
  OptimizerImpl impl() const { return impl_; }
  FusedAdamExtras& fused() { return fused_; }

 private:
  OptimizerImpl impl_;
  FusedAdamExtras fused_;
};
using MultiTensorAdam =
    MultiTensorAdamOf<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
using MultiTensorAdamW =
    MultiTensorAdamOf<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

class MultiTensorSGD : public torch::optim::SGD {
 public:
  MultiTensorSGD(std::vector<torch::optim::OptimizerParamGroup> groups, torch::optim::SGDOptions defaults,
                 OptimizerImpl impl);
  torch::Tensor step(LossClosure closure = nullptr) override;
  OptimizerImpl impl() const { return impl_; }

 private:
  OptimizerImpl impl_;
};

// The step implementation of an optimizer made by make_optimizer (kPerTensor for any other).
OptimizerImpl optimizer_impl_of(const torch::optim::Optimizer& optimizer);

// Whether `optimizer` can decide on the device to skip a step (the fused kernels take found_inf),
// so a non-finite gradient costs no host synchronisation.
bool can_skip_on_device(torch::optim::Optimizer& optimizer);
// One step, skipped by the kernels where `found_inf` (0-d float on the parameters' device) is
// non-zero. Needs can_skip_on_device().
void step_unless(torch::optim::Optimizer& optimizer, const at::Tensor& found_inf);
// Whether the fused step of `optimizer` can read its lr from the device (fused Adam/AdamW on a
// LibTorch with the tensor-lr kernels, 2.4+), so a captured step follows a learning-rate schedule.
bool can_take_lr_on_device(torch::optim::Optimizer& optimizer);
// Switches the fused step to device lrs (on the first call) and writes every group's current lr
// into them: one fill kernel per group, queued on the current stream, no host synchronisation.
// Call after the scheduler changed the lr and before the next (captured or replayed) step.
void refresh_device_lr(torch::optim::Optimizer& optimizer);
// Writes the fused kernels' device step counts into the optimizer state (a no-op for the other
// implementations); call before saving the state.
void sync_optimizer_steps_to_host(torch::optim::Optimizer& optimizer);

}  // namespace lerobot
