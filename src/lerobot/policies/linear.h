// nn.Linear's forward as PyTorch's Python frontend runs it: ATen's linear, which folds a
// contiguous N-d input into one addmm with the bias (LibTorch's C++ Linear module and
// functional::linear take matmul + a separate bias add for N-d inputs: one more kernel and two more
// autograd nodes per call, about 50 calls in an ACT step).
#pragma once

#include <torch/torch.h>

namespace lerobot {

inline torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return torch::linear(x, layer->weight, layer->bias);
}

}  // namespace lerobot
