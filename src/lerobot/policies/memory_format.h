// Channels-last (NHWC) convolution weights: with them cuDNN runs a policy's convolutions (the
// ResNet backbones) in NHWC, the layout bf16 tensor cores work in, without a transpose around each
// convolution; activations follow the weights' layout from the first convolution on. The
// parameters keep their shapes and names; only their strides change, so checkpoints (written
// contiguous) and loading are unaffected. --cuda.channels_last in train and eval.
#pragma once

#include <torch/torch.h>

namespace lerobot {

// Re-lays every 4-D parameter of `module` (convolution weights) in channels-last memory format, in
// place (the same Parameter objects, new strides). Call before the optimizer is built. Returns how
// many were converted.
int64_t use_channels_last(torch::nn::Module& module);

// Whether every 4-D parameter of `module` is channels-last.
bool is_channels_last(const torch::nn::Module& module);

}  // namespace lerobot
