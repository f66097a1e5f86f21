// Activation checkpointing (torch.utils.checkpoint's reentrant form, without RNG state: the
// VLA layers it wraps draw nothing): run a piece of the model without keeping its activations,
// and in the backward pass run it again with gradients on and backpropagate through that
// recomputation. Parameters the piece uses get their gradients accumulated then.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace lerobot {

using RecomputedFn = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>& inputs)>;

// With gradients off (inside another recomputed piece's first run) this is fn(inputs). Otherwise
// fn(inputs) computed under no_grad; its defined outputs carry one autograd node that recomputes
// fn and returns the gradients of the inputs that required them. Outputs may be undefined (they
// are then skipped). fn must compute the same thing when called again.
std::vector<torch::Tensor> recompute_in_backward(const RecomputedFn& fn, const std::vector<torch::Tensor>& inputs);

}  // namespace lerobot
