// Shared helpers for the policy tests: small ACT configs and random batches.
#pragma once

#include <string>
#include <vector>

#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/diffusion/configuration_diffusion.h"
#include "lerobot/policies/policy.h"

namespace lerobot::testing {

// 6-dof state and action, `cameras` VISUAL inputs (3, img, img) named observation.images.cam<i>,
// small transformer (dim 64, ff 128, 4 heads, 2 encoder / 1 decoder / 2 VAE layers), chunk 10,
// random backbone init (no weights file).
ACTConfig small_act_config(int cameras = 1, int64_t img = 32);

// A normalized-looking batch for `cfg`: images in [0, 1), N(0,1) state and actions, no padding.
Batch random_act_batch(const ACTConfig& cfg, int64_t batch_size, uint64_t seed);

// 2-dof state and action, one 3x32x32 camera (observation.images.top), a small U-Net (32, 64),
// horizon 8, n_action_steps 4, n_obs_steps 2, random backbone init.
DiffusionConfig small_diffusion_config();
// Batch for it: state (b, n_obs, 2) and actions in [-1, 1), images (b, n_obs, 3, 32, 32) in [0, 1).
Batch random_diffusion_batch(const DiffusionConfig& c, int64_t b, uint64_t seed);

std::string make_temp_dir(const std::string& tag);

// The reference scripts' weight formula (scripts/python_lerobot/*_reference.py):
// scale · sin(0.7 i + 0.3 k + 0.1) over i = 0..n-1 in float64, then float32.
torch::Tensor reference_formula(int64_t n, int64_t k, double scale);

}  // namespace lerobot::testing
