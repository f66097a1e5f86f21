// nn.Linear's forward as PyTorch's Python frontend runs it: ATen's linear, which folds a
// contiguous N-d input into one addmm with the bias (LibTorch's C++ Linear module and
// functional::linear take matmul + a separate bias add for N-d inputs: one more kernel and two more
// autograd nodes per call, about 50 calls in an ACT step).
#pragma once

#include <torch/torch.h>

#include "lerobot/policies/lora/lora_linear.h"

namespace lerobot {

// A layer given LoRA adapters (policies/lora/) adds their output; lora::adapters_present() is
// false in a process that never injected any.
inline torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  auto y = torch::linear(x, layer->weight, layer->bias);
  if (lora::adapters_present()) return lora::add_adapter(*layer, x, std::move(y));
  return y;
}

}  // namespace lerobot
