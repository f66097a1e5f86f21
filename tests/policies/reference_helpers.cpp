// The reference tests' shared JSON, formula, fill and comparisons (see reference_helpers.h).
#include "reference_helpers.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

namespace lerobot::testing {

const Json& reference_json(const std::string& name) {
  static std::map<std::string, Json> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    std::ifstream in(std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/" + name + "_reference.json");
    it = cache.emplace(name, Json::parse(in)).first;
  }
  return it->second;
}

torch::Tensor quadratic_formula(int64_t n, int64_t k, double scale) {
  const auto i = torch::arange(n, torch::kFloat64);
  // numpy's 0.7 * i + 0.3 * k + 0.1 + 1e-3 * i * i, left to right.
  auto phase = i * 0.7 + 0.3 * static_cast<double>(k);
  phase = phase + 0.1;
  phase = phase + (i * 1e-3) * i;
  return phase.sin().mul(scale).to(torch::kFloat);
}

torch::Tensor formula_tensor(int64_t k, std::vector<int64_t> shape, double scale, double offset) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return (quadratic_formula(n, k, scale) + offset).view(shape);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void fill_reference_weights(const Policy& policy, const std::vector<std::string>& natural_suffixes) {
  auto sd = policy.state_dict();
  torch::NoGradGuard no_grad;
  int64_t k = 0;
  for (auto& [name, t] : sd) {  // TensorMap is sorted by name, as the scripts' sorted(state_dict)
    bool natural = !t.is_floating_point();
    for (const auto& s : natural_suffixes) natural = natural || ends_with(name, s);
    if (!natural) {
      const double offset = ends_with(name, "weight") && t.dim() == 1 ? 1.0 : 0.0;
      t.copy_(formula_tensor(k, t.sizes().vec(), 0.1, offset));
    }
    ++k;
  }
}

void expect_close(const torch::Tensor& actual, const Json& expected, double rtol, double atol,
                  const std::string& what) {
  const auto a = actual.detach().to(torch::kDouble).reshape({-1});
  const auto e = torch::tensor(expected.get<std::vector<double>>(), torch::kDouble);
  ASSERT_EQ(a.numel(), e.numel()) << what;
  const auto bad = ((a - e).abs() > (e.abs() * rtol + atol)).sum().item<int64_t>();
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << a.numel() << " differ; largest difference "
                    << (a - e).abs().max().item<double>();
}

void expect_close(double actual, double expected, double rtol, double atol, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), atol + rtol * std::abs(expected))
      << what << ": " << actual << " vs " << expected;
}

void expect_state_dict_layout(const TensorMap& state, const Json& keys) {
  EXPECT_EQ(state.size(), keys.size()) << "state-dict entries";
  for (const auto& [name, spec] : keys.items()) {
    auto it = state.find(name);
    if (it == state.end()) {
      ADD_FAILURE() << "missing key " << name;
      continue;
    }
    EXPECT_EQ(it->second.sizes().vec(), spec["shape"].get<std::vector<int64_t>>()) << name;
    const std::string dtype = spec["dtype"];
    const auto want = dtype == "float32" ? torch::kFloat
                      : dtype == "int64" ? torch::kLong
                      : dtype == "bool"  ? torch::kBool
                                         : torch::kDouble;
    EXPECT_EQ(it->second.scalar_type(), want)
        << name << " is " << it->second.scalar_type() << ", LeRobot's " << dtype;
  }
  for (const auto& [name, t] : state) EXPECT_TRUE(keys.contains(name)) << "key LeRobot lacks: " << name;
}

void expect_gradient_sums(const Policy& policy, const Json& grads, double rtol) {
  std::map<std::string, torch::Tensor> params;
  for (const auto& p : policy.named_parameters(true)) params[p.key()] = p.value();
  for (const auto& [name, ref] : grads.items()) {
    auto it = params.find(name);
    if (it == params.end() || !it->second.grad().defined()) {
      ADD_FAILURE() << name << " has no gradient here";
      continue;
    }
    const auto g = it->second.grad().to(torch::kDouble);
    const double abs_sum = ref["abs_sum"];
    expect_close(g.abs().sum().item<double>(), abs_sum, rtol, 1e-9, name + " gradient |sum|");
    expect_close(g.sum().item<double>(), ref["sum"].get<double>(), 0, rtol * abs_sum + 1e-9,
                 name + " gradient sum");
  }
}

std::vector<std::string> parameters_without_grad(const Policy& policy) {
  std::vector<std::string> names;
  for (const auto& p : policy.named_parameters(true))
    if (!p.value().grad().defined()) names.push_back(p.key());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> reference_cameras(const Json& layout) {
  return layout["config"]["cameras"].get<std::vector<std::string>>();
}

int64_t reference_env_dim(const Json& layout) { return layout["config"]["env_dim"].get<int64_t>(); }

void apply_reference_config(PolicyConfig& cfg, const Json& layout, const std::string& file) {
  Json fields = layout["config"];
  fields.erase("cameras");
  fields.erase("env_dim");
  apply_json(cfg, fields, file);
  cfg.input_features["observation.state"] = {"STATE", {layout["state_dim"].get<int64_t>()}};
  cfg.input_feature_order = {"observation.state"};
  if (const int64_t env = reference_env_dim(layout); env > 0) {
    cfg.input_features["observation.environment_state"] = {"ENV", {env}};
    cfg.input_feature_order.push_back("observation.environment_state");
  }
  for (const auto& cam : reference_cameras(layout)) {
    cfg.input_features[cam] = {"VISUAL", layout["image_shape"].get<std::vector<int64_t>>()};
    cfg.input_feature_order.push_back(cam);
  }
  cfg.output_features["action"] = {"ACTION", {layout["action_dim"].get<int64_t>()}};
}

Stats reference_stats(const PolicyConfig& cfg) {
  Stats stats;
  std::vector<std::string> keys = cfg.ordered_input_keys();
  keys.push_back("action");
  int64_t j = 0;
  for (const auto& key : keys) {
    const auto& f = cfg.input_features.count(key) ? cfg.input_features.at(key) : cfg.output_features.at(key);
    const std::vector<int64_t> shape = f.type == "VISUAL" ? std::vector<int64_t>{3, 1, 1} : f.shape;
    stats[key] = {{"mean", formula_tensor(200 + j, shape, 0.3)},
                  {"std", formula_tensor(220 + j, shape, 0.2, 0.6)},
                  {"min", formula_tensor(240 + j, shape, 0.3, -1.0)},
                  {"max", formula_tensor(260 + j, shape, 0.3, 1.0)}};
    ++j;
  }
  return stats;
}

Batch observations_of(const Batch& batch) {
  Batch obs;
  for (const auto& [k, v] : batch)
    if (k.rfind("observation", 0) == 0) obs[k] = v;
  return obs;
}

}  // namespace lerobot::testing
