// make_multi_adam and the per-name optimizer state folders.
#include "lerobot/optim/multi_optimizer.h"

#include <torch/optim/adam.h>

#include <set>

#include "lerobot/common/error.h"
#include "lerobot/optim/optimizer_state.h"

namespace lerobot {

namespace {

double number_at(const Json& o, const char* key, double fallback, const std::string& where) {
  if (!o.contains(key)) return fallback;
  if (!o.at(key).is_number()) throw_usage(std::string(key) + " must be a number, got " + o.at(key).dump(), where);
  return o.at(key).get<double>();
}

}  // namespace

NamedOptimizers make_multi_adam(const MultiAdamConfig& c, const NamedParamGroups& groups, OptimizerImpl impl) {
  if (!c.optimizer_groups.is_object())
    throw_usage("optimizer_groups must be a dict {name: {lr, betas, eps, weight_decay}}", "optimizer.optimizer_groups");
  std::set<std::string> names;
  for (const auto& g : groups) names.insert(g.first);
  for (auto it = c.optimizer_groups.begin(); it != c.optimizer_groups.end(); ++it) {
    const std::string where = "optimizer.optimizer_groups." + it.key();
    if (!names.count(it.key())) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw_usage("no parameter group is named '" + it.key() + "'", where, "the policy's groups are: " + known);
    }
    if (!it.value().is_object()) throw_usage("expected a dict {lr, betas, eps, weight_decay}", where);
    for (auto kv = it.value().begin(); kv != it.value().end(); ++kv)
      if (kv.key() != "lr" && kv.key() != "betas" && kv.key() != "eps" && kv.key() != "weight_decay")
        throw_usage("unknown key '" + kv.key() + "'", where + "." + kv.key(), "use lr, betas, eps or weight_decay");
  }
  NamedOptimizers out;
  for (const auto& [name, params] : groups) {
    const Json o = c.optimizer_groups.contains(name) ? c.optimizer_groups.at(name) : Json::object();
    const std::string where = "optimizer.optimizer_groups." + name;
    double b1 = 0.9, b2 = 0.999;
    if (o.contains("betas")) {
      const Json& b = o.at("betas");
      if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number())
        throw_usage("betas must be two numbers, got " + b.dump(), where + ".betas");
      b1 = b[0].get<double>();
      b2 = b[1].get<double>();
    }
    torch::optim::AdamOptions opts(number_at(o, "lr", c.lr, where + ".lr"));
    opts.betas(std::make_tuple(b1, b2)).eps(number_at(o, "eps", 1e-5, where + ".eps"))
        .weight_decay(number_at(o, "weight_decay", c.weight_decay, where + ".weight_decay"))
        .amsgrad(false);
    std::vector<torch::optim::OptimizerParamGroup> torch_groups;
    torch_groups.emplace_back(params, std::make_unique<torch::optim::AdamOptions>(opts));
    out.emplace_back(name, std::make_unique<MultiTensorAdam>(std::move(torch_groups), opts, impl));
  }
  return out;
}

void save_multi_optimizer_state(const NamedOptimizers& optimizers, const fs::path& dir) {
  for (const auto& [name, opt] : optimizers) save_optimizer_state(*opt, dir / name);
}

void load_multi_optimizer_state(NamedOptimizers& optimizers, const fs::path& dir) {
  for (auto& [name, opt] : optimizers)
    if (fs::exists(dir / name / kOptimizerStateFile)) load_optimizer_state(*opt, dir / name);
}

}  // namespace lerobot
