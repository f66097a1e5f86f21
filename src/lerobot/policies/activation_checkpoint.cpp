// Activation checkpointing (see activation_checkpoint.h).
#define LEROBOT_AUTOCAST_COMPAT
#include "lerobot/policies/activation_checkpoint.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <ATen/CPUGeneratorImpl.h>

#include <mutex>
#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/policy_units.h"

namespace lerobot {
namespace {

thread_local bool t_recomputing = false;

// The generators a piece may draw from: the CPU default one and the CUDA ones of its inputs'
// devices (torch.utils.checkpoint's choice).
struct RngState {
  torch::Tensor cpu;
  std::vector<std::pair<c10::DeviceIndex, torch::Tensor>> cuda;
};

RngState save_rng(const std::set<c10::DeviceIndex>& cuda_devices) {
  RngState s;
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    s.cpu = cpu.get_state();
  }
  for (const auto d : cuda_devices) {
    at::Generator g = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, d));
    std::lock_guard<std::mutex> lock(g.mutex());
    s.cuda.emplace_back(d, g.get_state());
  }
  return s;
}

void restore_rng(const RngState& s) {
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(s.cpu);
  }
  for (const auto& [d, state] : s.cuda) {
    at::Generator g = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, d));
    std::lock_guard<std::mutex> lock(g.mutex());
    g.set_state(state);
  }
}

struct AutocastState {
  bool enabled[2] = {false, false};  // CPU, CUDA
  at::ScalarType dtype[2] = {at::kBFloat16, at::kHalf};
};

AutocastState current_autocast() {
  AutocastState a;
  for (int cuda = 0; cuda < 2; ++cuda) {
    a.enabled[cuda] = compat::autocast_enabled(cuda);
    a.dtype[cuda] = compat::autocast_dtype(cuda);
  }
  return a;
}

void set_autocast_state(const AutocastState& a) {
  for (int cuda = 0; cuda < 2; ++cuda) compat::set_autocast(cuda, a.enabled[cuda], a.dtype[cuda]);
}

struct RecomputeBackward : public torch::autograd::Node {
  RecomputedFn fn;
  std::vector<torch::Tensor> inputs;  // detached
  std::vector<bool> needs_grad;
  bool preserve_rng = false;
  RngState rng;  // before the first run
  std::set<c10::DeviceIndex> cuda_devices;
  AutocastState autocast;  // of the first run
  // The unit runner installed around the first run, installed again around the recomputation:
  // units inside the piece (a vision tower's layers) run through it both times (sharding gathers
  // their parameters again; the backward runs outside the forward's UnitRunnerScope).
  UnitRunner* runner = nullptr;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::vector<torch::Tensor> in;
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back(needs_grad[i] ? inputs[i].detach().requires_grad_(true) : inputs[i]);
    std::vector<torch::Tensor> outs;
    {
      RngState outside;
      if (preserve_rng) {
        outside = save_rng(cuda_devices);
        restore_rng(rng);
      }
      const AutocastState autocast_outside = current_autocast();
      set_autocast_state(autocast);
      at::autocast::increment_nesting();
      const bool was_recomputing = t_recomputing;
      t_recomputing = true;
      try {
        torch::AutoGradMode enable(true);
        UnitRunnerScope units(runner);
        outs = fn(in);
      } catch (...) {
        t_recomputing = was_recomputing;
        set_autocast_state(autocast_outside);
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        if (preserve_rng) restore_rng(outside);
        throw;
      }
      t_recomputing = was_recomputing;
      set_autocast_state(autocast_outside);
      if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      if (preserve_rng) restore_rng(outside);
    }
    std::vector<torch::Tensor> roots, root_grads;
    for (size_t j = 0; j < outs.size() && j < grads.size(); ++j)
      if (outs[j].defined() && outs[j].requires_grad() && grads[j].defined()) {
        roots.push_back(outs[j]);
        root_grads.push_back(grads[j]);
      }
    if (!roots.empty()) torch::autograd::backward(roots, root_grads);
    torch::autograd::variable_list result;
    for (size_t i = 0; i < in.size(); ++i) result.push_back(needs_grad[i] ? in[i].grad() : torch::Tensor());
    inputs.clear();  // released after the one backward it serves
    return result;
  }
  std::string name() const override { return "RecomputeBackward"; }
};

}  // namespace

bool recomputing() { return t_recomputing; }

std::vector<torch::Tensor> recompute_in_backward(const RecomputedFn& fn, const std::vector<torch::Tensor>& inputs,
                                                 bool preserve_rng_state) {
  // Gradients off: nothing to recompute. Inside a recomputation: the outer piece is being rebuilt
  // with its graph kept, so this one is too (no second recomputation).
  if (!torch::GradMode::is_enabled() || t_recomputing) return fn(inputs);
  auto node = std::shared_ptr<RecomputeBackward>(new RecomputeBackward(), torch::autograd::deleteNode);
  node->preserve_rng = preserve_rng_state;
  if (preserve_rng_state) {
    for (const auto& t : inputs)
      if (t.defined() && t.is_cuda()) node->cuda_devices.insert(t.device().index());
    node->rng = save_rng(node->cuda_devices);
  }
  node->autocast = current_autocast();
  node->runner = current_unit_runner();
  std::vector<torch::Tensor> outs;
  {
    torch::NoGradGuard no_grad;
    outs = fn(inputs);
  }
  node->fn = fn;
  for (const auto& t : inputs) {
    node->inputs.push_back(t.defined() ? t.detach() : t);
    node->needs_grad.push_back(t.defined() && t.requires_grad());
  }
  // Parameters inside fn need the node too, even when no input requires a gradient.
  node->set_next_edges(torch::autograd::collect_next_edges(inputs));
  for (auto& out : outs) {
    if (!out.defined()) {
      node->add_input_metadata(torch::autograd::Node::undefined_input());
      continue;
    }
    // An output that is one of the inputs (a piece that passes a tensor through) gets a tensor
    // of its own, or the input's history would be replaced.
    for (const auto& t : inputs)
      if (t.defined() && t.unsafeGetTensorImpl() == out.unsafeGetTensorImpl()) {
        out = out.detach();
        break;
      }
    if (at::isFloatingType(out.scalar_type()) || at::isComplexType(out.scalar_type())) {
      torch::autograd::set_history(out, node);
    } else {
      node->add_input_metadata(torch::autograd::Node::undefined_input());
    }
  }
  return outs;
}

ActivationCheckpointRunner::ActivationCheckpointRunner(Policy& policy, bool preserve_rng_state)
    : preserve_rng_state_(preserve_rng_state) {
  for (const auto& unit : policy.units())
    if (unit.module) {
      auto& params = params_[unit.module];
      for (auto& p : unit_parameters(policy, unit)) params.push_back(p);
    }
}

std::vector<torch::Tensor> ActivationCheckpointRunner::run(torch::nn::Module& unit,
                                                           const std::vector<torch::Tensor>& inputs, const UnitFn& fn) {
  if (!torch::GradMode::is_enabled() || t_recomputing) return fn(inputs);
  bool needs_graph = false;
  for (const auto& t : inputs) needs_graph = needs_graph || (t.defined() && t.requires_grad());
  if (!needs_graph) {
    const auto it = params_.find(&unit);
    if (it != params_.end()) {
      for (const auto& p : it->second) needs_graph = needs_graph || p.requires_grad();
    } else {
      for (const auto& p : unit.parameters()) needs_graph = needs_graph || p.requires_grad();
    }
  }
  if (!needs_graph) return fn(inputs);
  ++recomputed_runs_;
  return recompute_in_backward(fn, inputs, preserve_rng_state_);
}

std::unique_ptr<UnitRunner> activation_checkpointing_runner(Policy& policy, const std::string& mode,
                                                            const std::string& policy_type) {
  const std::string flag = "accelerator.activation_checkpointing.mode";
  if (mode == "none") return nullptr;
  if (mode != "full")
    throw_usage("unknown activation checkpointing mode '" + mode + "' (LeRobot's modes: none, full)", flag,
                "set --" + flag + "=none or =full");
  if (policy.units().empty())
    throw_usage("policy type '" + policy_type + "' declares no units to recompute (--" + flag + "=full)", flag,
                "set --" + flag + "=none for this policy");
  return std::make_unique<ActivationCheckpointRunner>(policy);
}

}  // namespace lerobot
