// Multi-tensor Adam, AdamW and SGD steps (see multi_tensor.h). Each follows torch::optim's own
// per-tensor step operation for operation, with one _foreach_ call per operation and group.
#define LEROBOT_OPTIM_COMPAT
#include "lerobot/optim/multi_tensor.h"

#include <ATen/Functions.h>
#include <torch/torch.h>

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"

namespace lerobot {
namespace {

using TensorVec = std::vector<at::Tensor>;

// The parameters of one group whose Adam state is at the same step (normally all of them) and
// that have the same dtype: the fused kernels take one dtype per call (SmolVLA trains bfloat16
// expert layers beside float32 projections), and the foreach kernels' fast path wants one too.
template <class State>
struct AdamBatch {
  TensorVec params, grads, exp_avgs, exp_avg_sqs;
  std::vector<State*> states;
};

template <class State, class Options>
void adam_step(torch::optim::Optimizer& optimizer, bool decoupled_weight_decay, OptimizerImpl impl,
               FusedAdamExtras& fused) {
  torch::NoGradGuard no_grad;
  auto& state = optimizer.state();
  size_t group_index = 0;
  for (auto& group : optimizer.param_groups()) {
    const size_t gi = group_index++;
    auto& o = static_cast<Options&>(group.options());
    LEROBOT_CHECK(!o.amsgrad(), "amsgrad has no multi-tensor step");
    std::map<std::pair<int64_t, c10::ScalarType>, AdamBatch<State>> by_step;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = compat::optim_state_key(p);
      auto it = state.find(key);
      if (it == state.end()) {  // lazy initialisation, as torch::optim
        auto s = std::make_unique<State>();
        s->step(0);
        s->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        s->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        state[key] = std::move(s);
        it = state.find(key);
      }
      auto& s = static_cast<State&>(*it->second);
      auto& b = by_step[{s.step(), p.scalar_type()}];
      b.params.push_back(p);
      b.grads.push_back(p.grad());
      b.exp_avgs.push_back(s.exp_avg());
      b.exp_avg_sqs.push_back(s.exp_avg_sq());
      b.states.push_back(&s);
    }
    const double lr = o.lr(), eps = o.eps(), wd = o.weight_decay();
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& [key, b] : by_step) {
      const int64_t step = key.first;
      for (State* s : b.states) s->step(step + 1);
      if (impl == OptimizerImpl::kFused) {
        TensorVec steps;
        for (const auto& p : b.params) steps.push_back(fused.steps.at_step(p.unsafeGetTensorImpl(), p, step));
        at::_foreach_add_(steps, 1);  // the kernels read the already-incremented step, as torch.optim
        for (const auto& p : b.params) fused.steps.advanced(p.unsafeGetTensorImpl());
        if (!fused.group_lr.empty())  // the lr the host last wrote to the device (refresh_device_lr)
          compat::fused_adam_tensor_lr_(b.params, b.grads, b.exp_avgs, b.exp_avg_sqs, steps, fused.group_lr.at(gi),
                                        beta1, beta2, wd, eps, decoupled_weight_decay, fused.found_inf);
        else
          compat::fused_adam_(b.params, b.grads, b.exp_avgs, b.exp_avg_sqs, steps, lr, beta1, beta2, wd, eps,
                              decoupled_weight_decay, fused.found_inf);
        if (fused.found_inf.defined())  // a skipped step does not count, as in torch.optim
          at::_foreach_sub_(steps, TensorVec(steps.size(), fused.found_inf));
        continue;
      }
      const auto t = static_cast<double>(step + 1);
      const double bias_correction1 = 1 - std::pow(beta1, t);
      const double bias_correction2 = 1 - std::pow(beta2, t);
      if (decoupled_weight_decay && wd != 0) at::_foreach_mul_(b.params, 1 - lr * wd);
      const TensorVec grads = !decoupled_weight_decay && wd != 0 ? at::_foreach_add(b.grads, b.params, wd) : b.grads;
      at::_foreach_mul_(b.exp_avgs, beta1);
      at::_foreach_add_(b.exp_avgs, grads, 1 - beta1);
      at::_foreach_mul_(b.exp_avg_sqs, beta2);
      at::_foreach_addcmul_(b.exp_avg_sqs, grads, grads, 1 - beta2);
      TensorVec denom = at::_foreach_sqrt(b.exp_avg_sqs);
      at::_foreach_div_(denom, std::sqrt(bias_correction2));
      at::_foreach_add_(denom, eps);
      at::_foreach_addcdiv_(b.params, b.exp_avgs, denom, -lr / bias_correction1);
    }
  }
}

// The closure of Optimizer::step(closure), evaluated with gradients on, as torch::optim does.
torch::Tensor run_closure(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode grad(true);
  return closure();
}

c10::Device device_of(const std::vector<torch::optim::OptimizerParamGroup>& groups) {
  for (const auto& g : groups)
    for (const auto& p : g.params()) return p.device();
  return c10::Device(c10::kCPU);
}

// kAuto → fused where available (Adam/AdamW on CUDA), else foreach. kFused where it cannot run is
// a usage error.
OptimizerImpl resolve(OptimizerImpl impl, bool adam_family, const c10::Device& device) {
  const bool fused_ok = adam_family && fused_adam_available(device);
  if (impl == OptimizerImpl::kAuto) return fused_ok && device.is_cuda() ? OptimizerImpl::kFused : OptimizerImpl::kForeach;
  if (impl == OptimizerImpl::kFused && !fused_ok)
    throw_usage(std::string("no fused ") + (adam_family ? "Adam kernels for " + device.str() + " in this LibTorch"
                                                          : "kernel for SGD"),
                "--optimizer_impl", "use foreach (or auto)");
  return impl;
}

}  // namespace

OptimizerImpl parse_optimizer_impl(const std::string& name) {
  if (name == "auto") return OptimizerImpl::kAuto;
  if (name == "fused") return OptimizerImpl::kFused;
  if (name == "foreach") return OptimizerImpl::kForeach;
  if (name == "per_tensor") return OptimizerImpl::kPerTensor;
  throw_usage("unknown optimizer implementation '" + name + "'", "--optimizer_impl",
              "use auto, fused, foreach or per_tensor");
}

const char* optimizer_impl_name(OptimizerImpl impl) {
  switch (impl) {
    case OptimizerImpl::kAuto: return "auto";
    case OptimizerImpl::kFused: return "fused";
    case OptimizerImpl::kForeach: return "foreach";
    case OptimizerImpl::kPerTensor: return "per_tensor";
  }
  return "?";
}

bool fused_adam_available(const c10::Device& device) {
  if (!compat::kHasFusedAdam) return false;
  if (device.is_cuda()) return true;
  return device.is_cpu() && LEROBOT_TORCH_AT_LEAST(2, 4);
}

bool fused_adam_tensor_lr_available(const c10::Device& device) {
  return compat::kHasFusedAdamTensorLr && fused_adam_available(device);
}

at::Tensor& FusedStepCounters::at_step(const void* key, const at::Tensor& param, int64_t host_step) {
  Entry& e = entries_[key];
  if (!e.tensor.defined())
    e.tensor = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(param.device()));
  if (e.host_step != host_step) {
    e.tensor.fill_(static_cast<double>(host_step));
    e.host_step = host_step;
  }
  return e.tensor;
}

void FusedStepCounters::sync_to_host(const std::function<void(const void*, int64_t)>& set_host_step) {
  if (entries_.empty()) return;
  TensorVec values;
  for (auto& [key, e] : entries_) values.push_back(e.tensor.reshape({1}));
  const at::Tensor host = torch::cat(values).to(torch::kCPU, torch::kInt64);
  int64_t i = 0;
  for (auto& [key, e] : entries_) {
    e.host_step = host[i++].item<int64_t>();
    set_host_step(key, e.host_step);
  }
}

template <class Base, class Options, class State, bool kDecoupled>
MultiTensorAdamOf<Base, Options, State, kDecoupled>::MultiTensorAdamOf(
    std::vector<torch::optim::OptimizerParamGroup> groups, Options defaults, OptimizerImpl impl)
    : Base(groups, std::move(defaults)), impl_(resolve(impl, true, device_of(groups))) {}

template <class Base, class Options, class State, bool kDecoupled>
torch::Tensor MultiTensorAdamOf<Base, Options, State, kDecoupled>::step(torch::optim::Optimizer::LossClosure closure) {
  if (impl_ == OptimizerImpl::kPerTensor) return Base::step(closure);
  torch::Tensor loss = run_closure(closure);
  adam_step<State, Options>(*this, kDecoupled, impl_, fused_);
  return loss;
}

template class MultiTensorAdamOf<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
template class MultiTensorAdamOf<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

MultiTensorSGD::MultiTensorSGD(std::vector<torch::optim::OptimizerParamGroup> groups,
                               torch::optim::SGDOptions defaults, OptimizerImpl impl)
    : torch::optim::SGD(groups, std::move(defaults)), impl_(resolve(impl, false, device_of(groups))) {}

// torch::optim::SGD's step per group: d_p = grad (+ wd * p); with momentum the buffer starts as a
// copy of d_p and then buf = momentum * buf + (1 - dampening) * d_p; nesterov: d_p + momentum * buf;
// p -= lr * d_p.
torch::Tensor MultiTensorSGD::step(LossClosure closure) {
  if (impl_ == OptimizerImpl::kPerTensor) return torch::optim::SGD::step(closure);
  torch::Tensor loss = run_closure(closure);
  torch::NoGradGuard no_grad;
  auto& state = this->state();
  for (auto& group : param_groups()) {
    auto& o = static_cast<torch::optim::SGDOptions&>(group.options());
    TensorVec params, grads;
    for (auto& p : group.params())
      if (p.grad().defined()) {
        params.push_back(p);
        grads.push_back(p.grad());
      }
    if (params.empty()) continue;
    if (o.weight_decay() != 0) grads = at::_foreach_add(grads, params, o.weight_decay());
    TensorVec d_p = grads;
    if (o.momentum() != 0) {
      TensorVec bufs(params.size()), old_bufs, old_grads;
      for (size_t i = 0; i < params.size(); ++i) {
        const auto key = compat::optim_state_key(params[i]);
        auto it = state.find(key);
        if (it == state.end()) {
          auto s = std::make_unique<torch::optim::SGDParamState>();
          s->momentum_buffer(torch::clone(grads[i]).detach());
          bufs[i] = s->momentum_buffer();
          state[key] = std::move(s);
        } else {
          bufs[i] = static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer();
          old_bufs.push_back(bufs[i]);
          old_grads.push_back(grads[i]);
        }
      }
      if (!old_bufs.empty()) {
        at::_foreach_mul_(old_bufs, o.momentum());
        at::_foreach_add_(old_bufs, old_grads, 1 - o.dampening());
      }
      d_p = o.nesterov() ? at::_foreach_add(grads, bufs, o.momentum()) : bufs;
    }
    at::_foreach_add_(params, d_p, -1 * o.lr());
  }
  return loss;
}

OptimizerImpl optimizer_impl_of(const torch::optim::Optimizer& optimizer) {
  if (const auto* o = dynamic_cast<const MultiTensorAdamW*>(&optimizer)) return o->impl();
  if (const auto* o = dynamic_cast<const MultiTensorAdam*>(&optimizer)) return o->impl();
  if (const auto* o = dynamic_cast<const MultiTensorSGD*>(&optimizer)) return o->impl();
  return OptimizerImpl::kPerTensor;
}

namespace {

FusedAdamExtras* fused_extras(torch::optim::Optimizer& optimizer) {
  if (auto* o = dynamic_cast<MultiTensorAdamW*>(&optimizer); o && o->impl() == OptimizerImpl::kFused)
    return &o->fused();
  if (auto* o = dynamic_cast<MultiTensorAdam*>(&optimizer); o && o->impl() == OptimizerImpl::kFused)
    return &o->fused();
  return nullptr;
}

template <class State>
void sync_steps(torch::optim::Optimizer& optimizer, FusedStepCounters& counters) {
  auto& state = optimizer.state();
  std::map<const void*, State*> by_key;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) {
      auto it = state.find(compat::optim_state_key(p));
      if (it != state.end()) by_key[p.unsafeGetTensorImpl()] = static_cast<State*>(it->second.get());
    }
  counters.sync_to_host([&](const void* key, int64_t step) {
    if (auto it = by_key.find(key); it != by_key.end()) it->second->step(step);
  });
}

}  // namespace

bool can_skip_on_device(torch::optim::Optimizer& optimizer) { return fused_extras(optimizer) != nullptr; }

void step_unless(torch::optim::Optimizer& optimizer, const at::Tensor& found_inf) {
  FusedAdamExtras* fused = fused_extras(optimizer);
  LEROBOT_CHECK(fused != nullptr, "step_unless needs a fused optimizer (can_skip_on_device)");
  fused->found_inf = found_inf.to(torch::kFloat32);
  try {
    optimizer.step();
  } catch (...) {
    fused->found_inf = at::Tensor();
    throw;
  }
  fused->found_inf = at::Tensor();
}

bool can_take_lr_on_device(torch::optim::Optimizer& optimizer) {
  return compat::kHasFusedAdamTensorLr && fused_extras(optimizer) != nullptr;
}

void refresh_device_lr(torch::optim::Optimizer& optimizer) {
  FusedAdamExtras* fused = fused_extras(optimizer);
  LEROBOT_CHECK(fused != nullptr && compat::kHasFusedAdamTensorLr,
                "refresh_device_lr needs the fused Adam/AdamW kernels with a tensor lr (can_take_lr_on_device)");
  auto& groups = optimizer.param_groups();
  if (fused->group_lr.empty()) {
    const c10::Device device = device_of(groups);
    for (size_t i = 0; i < groups.size(); ++i)
      fused->group_lr.push_back(torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device)));
  }
  for (size_t i = 0; i < groups.size(); ++i) fused->group_lr[i].fill_(groups[i].options().get_lr());
}

void sync_optimizer_steps_to_host(torch::optim::Optimizer& optimizer) {
  if (auto* o = dynamic_cast<MultiTensorAdamW*>(&optimizer); o && o->impl() == OptimizerImpl::kFused)
    sync_steps<torch::optim::AdamWParamState>(optimizer, o->fused().steps);
  else if (auto* a = dynamic_cast<MultiTensorAdam*>(&optimizer); a && a->impl() == OptimizerImpl::kFused)
    sync_steps<torch::optim::AdamParamState>(optimizer, a->fused().steps);
}

}  // namespace lerobot
