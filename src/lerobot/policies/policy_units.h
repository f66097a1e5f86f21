// Declaring a policy's units (policy.h, unit_runner.h) by their modules: each unit's state-dict
// prefixes are found by walking the policy's modules, so a declaration names modules, never
// strings that could drift from the module tree; and the checks every declaration must pass.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "lerobot/policies/unit_runner.h"

namespace lerobot {

// One unit: its class name and the modules whose parameters form it; modules.front() is what the
// forward passes to run_unit.
struct UnitModules {
  std::string class_name;
  std::vector<torch::nn::Module*> modules;
};

// One UnitModules per module of `list`, appended to `out`.
void add_list_units(std::vector<UnitModules>& out, const std::string& class_name, const torch::nn::ModuleList& list);

// The units with their prefixes ("model.encoder.layers.0.") under `policy`. Throws when a module
// is not inside `policy`.
std::vector<PolicyUnit> declare_units(const torch::nn::Module& policy, const std::vector<UnitModules>& units);

// What is wrong with `units` of `policy`: a unit without a module or prefix, a prefix not ending in
// '.' or matching no parameter, a parameter in two units. Empty when nothing is.
std::vector<std::string> unit_problems(const torch::nn::Module& policy, const std::vector<PolicyUnit>& units);

// The parameters under the unit's prefixes, in `policy`'s named_parameters() order.
std::vector<torch::Tensor> unit_parameters(const torch::nn::Module& policy, const PolicyUnit& unit);

}  // namespace lerobot
