// Activation checkpointing (see activation_checkpoint.h).
#include "lerobot/policies/vlm/activation_checkpoint.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

namespace lerobot {
namespace {

struct RecomputeBackward : public torch::autograd::Node {
  RecomputedFn fn;
  std::vector<torch::Tensor> inputs;  // detached
  std::vector<bool> needs_grad;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::vector<torch::Tensor> in;
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back(needs_grad[i] ? inputs[i].detach().requires_grad_(true) : inputs[i]);
    std::vector<torch::Tensor> outs;
    {
      torch::AutoGradMode enable(true);
      outs = fn(in);
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

std::vector<torch::Tensor> recompute_in_backward(const RecomputedFn& fn, const std::vector<torch::Tensor>& inputs) {
  if (!torch::GradMode::is_enabled()) return fn(inputs);  // nested inside another recomputed piece's forward
  std::vector<torch::Tensor> outs;
  {
    torch::NoGradGuard no_grad;
    outs = fn(inputs);
  }
  // Parameters inside fn need the node too, even when no input requires a gradient.
  auto node = std::shared_ptr<RecomputeBackward>(new RecomputeBackward(), torch::autograd::deleteNode);
  node->fn = fn;
  for (const auto& t : inputs) {
    node->inputs.push_back(t.defined() ? t.detach() : t);
    node->needs_grad.push_back(t.defined() && t.requires_grad());
  }
  node->set_next_edges(torch::autograd::collect_next_edges(inputs));
  for (auto& out : outs) torch::autograd::set_history(out, node);
  return outs;
}

}  // namespace lerobot
