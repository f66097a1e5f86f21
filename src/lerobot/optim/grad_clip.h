// Gradient clipping by total L2 norm (torch.nn.utils.clip_grad_norm_) and non-finite checks.
#pragma once

#include <torch/types.h>

#include <optional>
#include <string>
#include <vector>

namespace lerobot {

// Scales every defined gradient by min(1, max_norm / (total + 1e-6)) where total is the L2 norm
// of all gradients together; returns total (a 0-d float tensor on the gradients' device, computed
// BEFORE clipping). Parameters without a gradient are skipped; no gradients → 0.
torch::Tensor clip_grad_norm_(const std::vector<torch::Tensor>& params, double max_norm);

// The total L2 norm without clipping.
torch::Tensor total_grad_norm(const std::vector<torch::Tensor>& params);

// Index of the first parameter whose gradient holds a NaN or Inf (one device sync), or nullopt.
std::optional<size_t> first_nonfinite_grad(const std::vector<torch::Tensor>& params);

// Same, returning names[index] (or "param <index>" when names is shorter).
std::optional<std::string> first_nonfinite_grad_name(const std::vector<torch::Tensor>& params,
                                                     const std::vector<std::string>& names);

}  // namespace lerobot
