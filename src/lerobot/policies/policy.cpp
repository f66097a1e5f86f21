// Policy base: state dict export/import and default optimizer groups.
#include "lerobot/policies/policy.h"

#include "lerobot/common/error.h"

namespace lerobot {

std::vector<PolicyParamGroup> Policy::optim_param_groups() {
  PolicyParamGroup g;
  for (auto& p : named_parameters(true))
    if (p.value().requires_grad()) {
      g.names.push_back(p.key());
      g.params.push_back(p.value());
    }
  return {g};
}

TensorMap Policy::state_dict() const {
  TensorMap out;
  for (const auto& p : named_parameters(true)) out[p.key()] = p.value();
  for (const auto& b : named_buffers(true)) out[b.key()] = b.value();
  return out;
}

namespace {
std::string shape_str(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}
std::string key_list(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size() && i < 8; ++i) s += (i ? ", " : "") + keys[i];
  if (keys.size() > 8) s += ", ... (" + std::to_string(keys.size()) + " in all)";
  return s;
}
}  // namespace

void Policy::load_state_dict(const TensorMap& state, const std::string& source) {
  TensorMap own = state_dict();
  std::vector<std::string> missing, unexpected, shapes;
  for (const auto& kv : own) {
    auto it = state.find(kv.first);
    if (it == state.end()) missing.push_back(kv.first);
    else if (it->second.sizes() != kv.second.sizes())
      shapes.push_back(kv.first + " (file " + shape_str(it->second) + ", policy " + shape_str(kv.second) + ")");
  }
  for (const auto& kv : state)
    if (!own.count(kv.first)) unexpected.push_back(kv.first);
  if (!missing.empty() || !unexpected.empty() || !shapes.empty()) {
    std::string msg = "the weights do not fit this " + type() + " policy:";
    if (!missing.empty()) msg += " missing keys: " + key_list(missing) + ".";
    if (!unexpected.empty()) msg += " unexpected keys: " + key_list(unexpected) + ".";
    if (!shapes.empty()) msg += " mis-shaped keys: " + key_list(shapes) + ".";
    throw_checkpoint(msg, source,
                     "check that config.json (type, features, dims) matches the checkpoint it came with");
  }
  torch::NoGradGuard no_grad;
  for (auto& kv : own) kv.second.copy_(state.at(kv.first));
  on_state_loaded();
}

torch::Device Policy::device() const {
  for (const auto& p : parameters(true)) return p.device();
  for (const auto& b : buffers(true)) return b.device();
  return torch::kCPU;
}

}  // namespace lerobot
