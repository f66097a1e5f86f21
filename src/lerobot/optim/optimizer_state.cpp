// Converts torch::optim state to and from LeRobot's optimizer_state.safetensors and
// optimizer_param_groups.json.
#define LEROBOT_OPTIM_COMPAT
#include "lerobot/optim/optimizer_state.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/optim/optimizer.h"

namespace lerobot {

namespace {

torch::Tensor cpu_copy(const torch::Tensor& t) { return t.detach().to(torch::kCPU).clone(); }

torch::Tensor step_tensor(int64_t step) {
  return torch::tensor(static_cast<float>(step), torch::kFloat32);  // 0-d, as torch 2.x stores it
}

template <class State>
void put_adam_state(TensorMap& out, const std::string& prefix, const State& s) {
  out[prefix + "step"] = step_tensor(s.step());
  out[prefix + "exp_avg"] = cpu_copy(s.exp_avg());
  out[prefix + "exp_avg_sq"] = cpu_copy(s.exp_avg_sq());
  if (s.max_exp_avg_sq().defined()) out[prefix + "max_exp_avg_sq"] = cpu_copy(s.max_exp_avg_sq());
}

template <class Options>
void put_adam_group(Json& j, const Options& o, OptimizerKind kind, TorchStateFormat format) {
  j["lr"] = o.lr();
  j["betas"] = Json::array({std::get<0>(o.betas()), std::get<1>(o.betas())});
  j["eps"] = o.eps();
  j["weight_decay"] = o.weight_decay();
  j["amsgrad"] = o.amsgrad();
  j["maximize"] = false;
  j["foreach"] = nullptr;
  j["capturable"] = false;
  j["differentiable"] = false;
  j["fused"] = nullptr;
  if (format != TorchStateFormat::kTorch2_2) j["decoupled_weight_decay"] = kind == OptimizerKind::kAdamW;
}

const Json& key_of(const Json& g, const char* key, const std::string& where) {
  if (!g.contains(key))
    throw_checkpoint(std::string("a param group lacks '") + key + "'", where,
                     "the file was not written for this optimizer type; check --optimizer.type");
  return g.at(key);
}

template <class Options>
void read_adam_group(Options& o, const Json& g, const std::string& where) {
  o.lr(key_of(g, "lr", where).get<double>());
  const Json& b = key_of(g, "betas", where);
  if (!b.is_array() || b.size() != 2) throw_checkpoint("'betas' must be a list of two numbers", where);
  o.betas(std::make_tuple(b[0].get<double>(), b[1].get<double>()));
  o.eps(key_of(g, "eps", where).get<double>());
  o.weight_decay(key_of(g, "weight_decay", where).get<double>());
  if (g.contains("amsgrad")) o.amsgrad(g.at("amsgrad").get<bool>());
}

torch::Tensor need(const TensorMap& m, const std::string& key, const std::string& where) {
  auto it = m.find(key);
  if (it == m.end())
    throw_checkpoint("missing tensor '" + key + "'", where, "the optimizer state file is incomplete");
  return it->second;
}

int64_t read_step(const TensorMap& m, const std::string& prefix, const std::string& where) {
  return static_cast<int64_t>(std::llround(need(m, prefix + "step", where).to(torch::kFloat64).item<double>()));
}

}  // namespace

TensorMap optimizer_state_tensors(const torch::optim::Optimizer& optimizer) {
  TensorMap out;
  const auto& state = optimizer.state();
  const OptimizerKind kind = optimizer_kind(optimizer);
  size_t idx = 0;
  for (const auto& p : all_params(optimizer)) {
    const std::string prefix = "state/" + std::to_string(idx++) + "/";
    auto it = state.find(compat::optim_state_key(p));
    if (it == state.end()) continue;
    const auto& s = *it->second;
    switch (kind) {
      case OptimizerKind::kAdam:
        put_adam_state(out, prefix, static_cast<const torch::optim::AdamParamState&>(s));
        break;
      case OptimizerKind::kAdamW:
        put_adam_state(out, prefix, static_cast<const torch::optim::AdamWParamState&>(s));
        break;
      case OptimizerKind::kSGD: {
        const auto& sg = static_cast<const torch::optim::SGDParamState&>(s);
        if (sg.momentum_buffer().defined()) out[prefix + "momentum_buffer"] = cpu_copy(sg.momentum_buffer());
        break;
      }
    }
  }
  return out;
}

Json optimizer_param_groups_json(const torch::optim::Optimizer& optimizer,
                                 const std::optional<std::vector<double>>& initial_lrs,
                                 TorchStateFormat format) {
  const OptimizerKind kind = optimizer_kind(optimizer);
  const auto& groups = optimizer.param_groups();
  if (initial_lrs)
    LEROBOT_CHECK(initial_lrs->size() == groups.size(), "one initial_lr per param group");
  Json out = Json::array();
  int64_t next = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    Json j = Json::object();
    if (kind == OptimizerKind::kAdamW)
      put_adam_group(j, static_cast<const torch::optim::AdamWOptions&>(g.options()), kind, format);
    else if (kind == OptimizerKind::kAdam)
      put_adam_group(j, static_cast<const torch::optim::AdamOptions&>(g.options()), kind, format);
    else {
      const auto& o = static_cast<const torch::optim::SGDOptions&>(g.options());
      j["lr"] = o.lr();
      j["momentum"] = o.momentum();
      j["dampening"] = o.dampening();
      j["weight_decay"] = o.weight_decay();
      j["nesterov"] = o.nesterov();
      j["maximize"] = false;
      j["foreach"] = nullptr;
      j["differentiable"] = false;
      j["fused"] = nullptr;
    }
    if (initial_lrs) j["initial_lr"] = (*initial_lrs)[gi];
    Json params = Json::array();
    for (size_t k = 0; k < g.params().size(); ++k) params.push_back(next++);
    j["params"] = params;
    out.push_back(j);
  }
  return out;
}

void save_optimizer_state(const torch::optim::Optimizer& optimizer, const fs::path& dir,
                          const std::optional<std::vector<double>>& initial_lrs,
                          TorchStateFormat format) {
  fs::create_directories(dir);
  save_safetensors(dir / kOptimizerStateFile, optimizer_state_tensors(optimizer), {});
  write_file_atomic(dir / kOptimizerParamGroupsFile,
                    dump_pretty(optimizer_param_groups_json(optimizer, initial_lrs, format), 4));
}

void load_optimizer_state(torch::optim::Optimizer& optimizer, const fs::path& dir) {
  TensorMap state = load_safetensors(dir / kOptimizerStateFile);
  const fs::path groups_path = dir / kOptimizerParamGroupsFile;
  Json groups;
  try {
    groups = Json::parse(read_file(groups_path));
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("invalid JSON: ") + e.what(), groups_path.string());
  }
  load_optimizer_state(optimizer, state, groups, dir.string());
}

void load_optimizer_state(torch::optim::Optimizer& optimizer, const TensorMap& state,
                          const Json& param_groups, const std::string& where) {
  const OptimizerKind kind = optimizer_kind(optimizer);
  auto& groups = optimizer.param_groups();
  if (!param_groups.is_array() || param_groups.size() != groups.size())
    throw_checkpoint("the checkpoint has " + std::to_string(param_groups.is_array() ? param_groups.size() : 0) +
                         " optimizer param groups, this optimizer has " + std::to_string(groups.size()),
                     where + "/" + kOptimizerParamGroupsFile,
                     "resume with the same policy type and optimizer settings");
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Json& g = param_groups[gi];
    const Json& ids = key_of(g, "params", where);
    if (!ids.is_array() || ids.size() != groups[gi].params().size())
      throw_checkpoint("param group " + std::to_string(gi) + " has " + std::to_string(ids.size()) +
                           " params in the checkpoint but " + std::to_string(groups[gi].params().size()) + " here",
                       where + "/" + kOptimizerParamGroupsFile,
                       "the model's parameters changed since the checkpoint; resume with the same policy config");
    if (kind == OptimizerKind::kAdamW)
      read_adam_group(static_cast<torch::optim::AdamWOptions&>(groups[gi].options()), g, where);
    else if (kind == OptimizerKind::kAdam)
      read_adam_group(static_cast<torch::optim::AdamOptions&>(groups[gi].options()), g, where);
    else {
      auto& o = static_cast<torch::optim::SGDOptions&>(groups[gi].options());
      o.lr(key_of(g, "lr", where).get<double>());
      o.momentum(key_of(g, "momentum", where).get<double>());
      o.dampening(key_of(g, "dampening", where).get<double>());
      o.weight_decay(key_of(g, "weight_decay", where).get<double>());
      o.nesterov(key_of(g, "nesterov", where).get<bool>());
    }
  }
  auto& live = optimizer.state();
  live.clear();
  size_t idx = 0;
  for (const auto& p : all_params(optimizer)) {
    const std::string prefix = "state/" + std::to_string(idx++) + "/";
    auto like = [&](const torch::Tensor& t, const std::string& name) {
      if (!t.sizes().equals(p.sizes()))
        throw_checkpoint("tensor '" + prefix + name + "' has the wrong shape for its parameter", where,
                         "the model's parameters changed since the checkpoint; resume with the same policy config");
      return t.to(p.device(), p.scalar_type()).clone();
    };
    if (kind == OptimizerKind::kSGD) {
      auto it = state.find(prefix + "momentum_buffer");
      if (it == state.end()) continue;
      auto s = std::make_unique<torch::optim::SGDParamState>();
      s->momentum_buffer(like(it->second, "momentum_buffer"));
      live[compat::optim_state_key(p)] = std::move(s);
      continue;
    }
    if (state.find(prefix + "step") == state.end()) continue;
    auto fill = [&](auto s) {
      s->step(read_step(state, prefix, where));
      s->exp_avg(like(need(state, prefix + "exp_avg", where), "exp_avg"));
      s->exp_avg_sq(like(need(state, prefix + "exp_avg_sq", where), "exp_avg_sq"));
      auto m = state.find(prefix + "max_exp_avg_sq");
      if (m != state.end()) s->max_exp_avg_sq(like(m->second, "max_exp_avg_sq"));
      live[compat::optim_state_key(p)] = std::move(s);
    };
    if (kind == OptimizerKind::kAdamW) fill(std::make_unique<torch::optim::AdamWParamState>());
    else fill(std::make_unique<torch::optim::AdamParamState>());
  }
}

}  // namespace lerobot
