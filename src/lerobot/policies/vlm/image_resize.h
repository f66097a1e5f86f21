// The VLAs' aspect-keeping resize of camera images (LeRobot's vla_utils): fit height × width with
// a bilinear resize, then pad the rest.
#pragma once

#include <torch/torch.h>

namespace lerobot {

// resize_with_pad (SmolVLA's convention): (B, C, H, W) resized, then padded on the left and top
// with pad_value; unchanged when already height × width.
torch::Tensor resize_with_pad(const torch::Tensor& img, int64_t height, int64_t width, double pad_value);

// openpi's resize_with_pad_torch (π0, π0.5) for float images in [0, 1]: resized, clamped to [0, 1],
// padded with 0 centred (the extra pixel of an odd margin at the bottom / right).
torch::Tensor resize_with_pad_centered(const torch::Tensor& img, int64_t height, int64_t width);

}  // namespace lerobot
