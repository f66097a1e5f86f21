// What the ACT and Diffusion reference tests share: tests/policies/data/<name>_reference.json
// (written by scripts/python_lerobot/<name>_reference.py from Python LeRobot 0.6.2), the scripts'
// weight and input formula, their fill of a policy's state dict, and the comparisons.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot::testing {

// tests/policies/data/<name>_reference.json, parsed once.
const Json& reference_json(const std::string& name);

// A layout's cameras and environment-state width (0: none), from its "config".
std::vector<std::string> reference_cameras(const Json& layout);
int64_t reference_env_dim(const Json& layout);

// Applies a layout's "config" (less the script's own cameras/env_dim keys) to cfg, and its
// features in the script's order: state, environment state, cameras; then the action.
void apply_reference_config(PolicyConfig& cfg, const Json& layout, const std::string& file);

// The scripts' stats(): per feature in the config's order (inputs, then the action), mean/std/
// min/max from the formula (a camera's per channel, (3, 1, 1)).
Stats reference_stats(const PolicyConfig& cfg);

// The observation.* entries of a batch.
Batch observations_of(const Batch& batch);

// The scripts' formula: scale · sin(0.7 i + 0.3 k + 0.1 + 0.001 i²) over i = 0..n-1 in float64
// (terms added in the scripts' order), then float32.
torch::Tensor quadratic_formula(int64_t n, int64_t k, double scale);
// The scripts' t(k, shape, scale, offset): offset + formula, reshaped, float32.
torch::Tensor formula_tensor(int64_t k, std::vector<int64_t> shape, double scale = 1.0, double offset = 0.0);

// The scripts' fill(): over the state dict sorted by name (k counts every entry), each floating
// tensor whose name ends with none of `natural_suffixes` becomes 0.1 · formula, plus 1 for a 1-D
// `...weight` (norm layers).
void fill_reference_weights(const Policy& policy, const std::vector<std::string>& natural_suffixes);

// |a - e| <= atol + rtol |e|, elementwise, against a JSON list.
void expect_close(const torch::Tensor& actual, const Json& expected, double rtol, double atol,
                  const std::string& what);
void expect_close(double actual, double expected, double rtol, double atol, const std::string& what);

// Every name of the script's state dict with its shape and dtype, and no other.
void expect_state_dict_layout(const TensorMap& state, const Json& keys);

// For each {"name": {"sum", "abs_sum"}}: the gradient's absolute sum to `rtol`, its signed sum to
// `rtol` of the absolute sum (a signed sum can cancel to rounding noise).
void expect_gradient_sums(const Policy& policy, const Json& grads, double rtol);

// The names of parameters left without a gradient by the last backward, sorted.
std::vector<std::string> parameters_without_grad(const Policy& policy);

bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace lerobot::testing
