// Small pieces the transformers-style modules build from: a Linear with or without bias, an empty
// container module standing for one of transformers' nesting levels ("embeddings", "encoder",
// "paligemma"), and LeRobot's get_optim_params of the VLA policies (every parameter in one group,
// the frozen ones included: they get no gradient and the optimizer skips them).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"

namespace lerobot {

inline torch::nn::Linear make_linear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

inline std::shared_ptr<torch::nn::Module> child_module(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

inline std::vector<PolicyParamGroup> every_parameter_group(const torch::nn::Module& m) {
  PolicyParamGroup g;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) {
    g.names.push_back(p.key());
    g.params.push_back(p.value());
  }
  return {g};
}

}  // namespace lerobot
