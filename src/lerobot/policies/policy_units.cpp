// Declaring and checking a policy's units (see policy_units.h).
#include "lerobot/policies/policy_units.h"

#include <map>
#include <unordered_map>

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot {
void add_list_units(std::vector<UnitModules>& out, const std::string& class_name, const torch::nn::ModuleList& list) {
  for (const auto& m : *list) out.push_back({class_name, {m.get()}});
}

std::vector<PolicyUnit> declare_units(const torch::nn::Module& policy, const std::vector<UnitModules>& units) {
  std::unordered_map<const torch::nn::Module*, std::string> names;
  for (const auto& item : policy.named_modules("", /*include_self=*/false)) names.emplace(item.value().get(), item.key());
  std::vector<PolicyUnit> out;
  for (const auto& u : units) {
    PolicyUnit unit;
    unit.class_name = u.class_name;
    unit.module = u.modules.empty() ? nullptr : u.modules.front();
    for (const auto* m : u.modules) {
      const auto it = names.find(m);
      if (it == names.end())
        throw_runtime("a " + u.class_name + " unit names a module that is not part of the policy", "Policy::units()",
                      "declare units from the policy's own modules");
      unit.prefixes.push_back(it->second + ".");
    }
    out.push_back(std::move(unit));
  }
  return out;
}

std::vector<std::string> unit_problems(const torch::nn::Module& policy, const std::vector<PolicyUnit>& units) {
  std::vector<std::string> problems;
  const auto params = policy.named_parameters(/*recurse=*/true);
  std::map<std::string, std::string> owner;  // parameter name -> the unit that claimed it first
  for (size_t i = 0; i < units.size(); ++i) {
    const auto& u = units[i];
    const std::string label = "unit " + std::to_string(i) + " (" + u.class_name + ")";
    if (!u.module) problems.push_back(label + " has no module");
    if (u.prefixes.empty()) problems.push_back(label + " has no prefix");
    for (const auto& prefix : u.prefixes) {
      if (prefix.empty() || prefix.back() != '.') problems.push_back(label + ": prefix '" + prefix + "' does not end in '.'");
      int64_t matched = 0;
      for (const auto& p : params) {
        if (!starts_with(p.key(), prefix)) continue;
        ++matched;
        const auto [it, fresh] = owner.emplace(p.key(), label);
        if (!fresh && it->second != label) problems.push_back(p.key() + " is in " + it->second + " and " + label);
      }
      if (matched == 0) problems.push_back(label + ": prefix '" + prefix + "' matches no parameter");
    }
  }
  return problems;
}

std::vector<torch::Tensor> unit_parameters(const torch::nn::Module& policy, const PolicyUnit& unit) {
  std::vector<torch::Tensor> out;
  for (const auto& p : policy.named_parameters(/*recurse=*/true))
    for (const auto& prefix : unit.prefixes)
      if (starts_with(p.key(), prefix)) {
        out.push_back(p.value());
        break;
      }
  return out;
}

}  // namespace lerobot
