// make_optimizer and per-group learning-rate access over torch::optim.
#include "lerobot/optim/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <cctype>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {

std::tuple<double, double> betas_of(const AdamConfig& c) {
  if (c.betas.size() != 2)
    throw_usage("betas must have exactly two values, got " + std::to_string(c.betas.size()),
                "--optimizer.betas", "pass --optimizer.betas='[0.9, 0.999]'");
  return {c.betas[0], c.betas[1]};
}

template <class Options>
std::vector<torch::optim::OptimizerParamGroup> torch_groups(const std::vector<ParamGroup>& groups,
                                                            const Options& defaults) {
  std::vector<torch::optim::OptimizerParamGroup> out;
  for (const auto& g : groups) {
    auto options = std::make_unique<Options>(defaults);
    if (g.lr) options->lr(*g.lr);
    if (g.weight_decay) options->weight_decay(*g.weight_decay);
    out.emplace_back(g.params, std::move(options));
  }
  return out;
}

bool contains_lower(std::string name, const std::string& what) {
  for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name.find(what) != std::string::npos;
}

// LeRobot's XVLAAdamWConfig.build over the named parameters of every group (a group's own lr is
// not used: XVLA takes named_parameters()).
std::unique_ptr<torch::optim::Optimizer> make_xvla_adamw(const XVLAAdamWConfig& c,
                                                         const std::vector<ParamGroup>& groups,
                                                         OptimizerImpl impl) {
  if (c.betas.size() != 2)
    throw_usage("betas must have exactly two values, got " + std::to_string(c.betas.size()),
                "--optimizer.betas", "pass --optimizer.betas='[0.9, 0.99]'");
  std::vector<torch::Tensor> vlm, soft, other;
  for (const auto& g : groups) {
    if (g.names.size() != g.params.size())
      throw_usage("xvla-adamw groups parameters by name and this policy gives none", "--optimizer.type",
                  "use --optimizer.type=adamw");
    for (size_t i = 0; i < g.params.size(); ++i) {
      if (!g.params[i].requires_grad()) continue;
      if (contains_lower(g.names[i], "vlm")) vlm.push_back(g.params[i]);
      else if (contains_lower(g.names[i], "soft_prompt")) soft.push_back(g.params[i]);
      else other.push_back(g.params[i]);
    }
  }
  const double soft_lr = c.lr * c.soft_prompt_warmup_lr_scale.value_or(c.soft_prompt_lr_scale);
  torch::optim::AdamWOptions defaults(c.lr);
  defaults.betas(std::make_tuple(c.betas[0], c.betas[1])).eps(c.eps).weight_decay(c.weight_decay).amsgrad(false);
  std::vector<torch::optim::OptimizerParamGroup> out;
  auto add = [&](const std::vector<torch::Tensor>& params, double lr, double wd) {
    if (params.empty()) return;  // LeRobot filters out empty groups
    auto o = std::make_unique<torch::optim::AdamWOptions>(defaults);
    o->lr(lr).weight_decay(wd);
    out.emplace_back(params, std::move(o));
  };
  add(vlm, c.lr * 0.1, c.weight_decay * 0.1);
  add(soft, soft_lr, c.weight_decay);
  add(other, c.lr, c.weight_decay);
  return std::make_unique<MultiTensorAdamW>(std::move(out), defaults, impl);
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<ParamGroup>& groups,
                                                        OptimizerImpl impl) {
  for (const auto& g : groups)
    LEROBOT_CHECK(g.names.empty() || g.names.size() == g.params.size(),
                  "ParamGroup names must parallel params");
  const std::string type = config.type();
  if (type == "adam" || type == "adamw") {
    const auto& c = dynamic_cast<const AdamConfig&>(config);
    if (type == "adamw") {
      torch::optim::AdamWOptions o(c.lr);
      o.betas(betas_of(c)).eps(c.eps).weight_decay(c.weight_decay).amsgrad(false);
      return std::make_unique<MultiTensorAdamW>(torch_groups(groups, o), o, impl);
    }
    torch::optim::AdamOptions o(c.lr);
    o.betas(betas_of(c)).eps(c.eps).weight_decay(c.weight_decay).amsgrad(false);
    return std::make_unique<MultiTensorAdam>(torch_groups(groups, o), o, impl);
  }
  if (type == "sgd") {
    const auto& c = dynamic_cast<const SGDConfig&>(config);
    torch::optim::SGDOptions o(c.lr);
    o.momentum(c.momentum).dampening(c.dampening).weight_decay(c.weight_decay).nesterov(c.nesterov);
    return std::make_unique<MultiTensorSGD>(torch_groups(groups, o), o, impl);
  }
  if (type == "xvla-adamw") return make_xvla_adamw(dynamic_cast<const XVLAAdamWConfig&>(config), groups, impl);
  if (type == "multi_adam")
    throw_usage("multi_adam builds one Adam per named parameter group, and only a policy that splits its "
                    "parameters into named groups (LeRobot's SAC: actor, critic, temperature) can use it; the ACT "
                    "and Diffusion policies give one parameter list (LeRobot asserts on that too)",
                "--optimizer.type", "use --optimizer.type=adam (or adamw, sgd, xvla-adamw)");
  throw_usage("optimizer type '" + type + "' is not supported", "--optimizer.type",
              "use adam, adamw, sgd or xvla-adamw");
}

OptimizerKind optimizer_kind(const torch::optim::Optimizer& optimizer) {
  if (dynamic_cast<const torch::optim::AdamW*>(&optimizer)) return OptimizerKind::kAdamW;
  if (dynamic_cast<const torch::optim::Adam*>(&optimizer)) return OptimizerKind::kAdam;
  if (dynamic_cast<const torch::optim::SGD*>(&optimizer)) return OptimizerKind::kSGD;
  LEROBOT_CHECK(false, "optimizer is not Adam, AdamW or SGD");
}

const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdamW: return "adamw";
    case OptimizerKind::kSGD: return "sgd";
  }
  return "?";
}

double group_lr(const torch::optim::Optimizer& optimizer, size_t group) {
  LEROBOT_CHECK(group < optimizer.param_groups().size(), "param group index out of range");
  return optimizer.param_groups()[group].options().get_lr();
}

void set_group_lr(torch::optim::Optimizer& optimizer, size_t group, double lr) {
  LEROBOT_CHECK(group < optimizer.param_groups().size(), "param group index out of range");
  optimizer.param_groups()[group].options().set_lr(lr);
}

std::vector<torch::Tensor> all_params(const torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> out;
  for (const auto& g : optimizer.param_groups())
    for (const auto& p : g.params()) out.push_back(p);
  return out;
}

void zero_grad_to_none(torch::optim::Optimizer& optimizer) {
  for (auto& g : optimizer.param_groups())
    for (auto& p : g.params())
      if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
}

}  // namespace lerobot
