#include "lerobot/policies/lora/lora_linear.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "lerobot/common/error.h"

namespace lerobot::lora {
namespace {

std::atomic<bool> g_present{false};

// What a LoRA Linear knows besides its two layers: a parameterless child "lora_settings".
struct LoraLinkImpl : torch::nn::Module {
  LoraLinkImpl(double scaling, double dropout) : scaling(scaling), dropout(dropout) {}
  double scaling;
  double dropout;
};

bool ends_with_dot(const std::string& name, const std::string& suffix) {
  return name == suffix || (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                            name[name.size() - suffix.size() - 1] == '.');
}

[[noreturn]] void refuse(const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::kUsage, what, "peft.target_modules", fix);
}

bool is_lora_param(const std::string& name) {
  return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos ||
         name.rfind("lora_A.", 0) == 0 || name.rfind("lora_B.", 0) == 0;
}

}  // namespace

bool is_module_to_save(const LoraSettings& s, const std::string& name) {
  for (const auto& m : s.modules_to_save)  // PEFT: re.match(rf"(^|.*\.){m}($|\..*)", key)
    if (std::regex_match(name, std::regex("(^|.*\\.)" + m + "($|\\..*)"))) return true;
  return false;
}

bool is_target(const LoraSettings& s, const std::string& name) {
  if (is_module_to_save(s, name)) return false;
  if (s.target_regex) return std::regex_match(name, std::regex(*s.target_regex));
  for (const auto& t : s.target_names)
    if (ends_with_dot(name, t)) return true;
  return false;
}

std::vector<std::string> inject(torch::nn::Module& root, const LoraSettings& s) {
  if (s.r <= 0) throw Error(ErrorKind::kUsage, "LoRA rank must be positive (r = " + std::to_string(s.r) + ")", "peft.r", "pass --peft.r=16");
  if (s.target_regex && *s.target_regex == "all-linear")
    refuse("target_modules 'all-linear' is not implemented (PEFT resolves it against a transformers model's output layer)",
           "name the modules: --peft.target_modules='[q_proj,v_proj]' or a regular expression");
  if (s.init_lora_weights != "true" && s.init_lora_weights != "false" && s.init_lora_weights != "gaussian")
    throw Error(ErrorKind::kUsage, "LoRA init_type '" + s.init_lora_weights + "' is not implemented (true, false, gaussian are)",
                "peft.init_type", "drop --peft.init_type or pass gaussian");
  std::vector<std::string> targeted;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    const std::string& name = item.key();
    if (name.find("lora_") != std::string::npos) continue;
    if (!is_target(s, name)) continue;
    auto* lin = dynamic_cast<torch::nn::LinearImpl*>(item.value().get());
    if (!lin)
      refuse("PEFT target '" + name + "' is not a Linear layer (only LoRA on Linear is implemented)",
             "narrow --peft.target_modules to Linear layers");
    if (lin->named_children().size() != 0) {
      // Adapters loaded from an adapter checkpoint (a new run from one: LeRobot's trainer skips
      // wrap_with_peft for a PeftModel): kept as they are when they have this rank.
      auto* a = lin->named_children().find("lora_A");
      if (!a) continue;
      if ((*a)->as<torch::nn::LinearImpl>()->weight.size(0) != s.r)
        throw Error(ErrorKind::kUsage, "'" + name + "' already carries LoRA adapters of another rank than r = " + std::to_string(s.r),
                    "peft.r", "drop --peft.r: the adapters' own settings apply");
      targeted.push_back(name);
      continue;
    }
    const auto& w = lin->weight;
    const int64_t out = w.size(0), in = w.size(1);
    auto opts = torch::TensorOptions().dtype(torch::kFloat).device(w.device());
    torch::nn::Linear a(torch::nn::LinearOptions(in, s.r).bias(false));
    torch::nn::Linear b(torch::nn::LinearOptions(s.r, out).bias(false));
    a->to(opts.device(), torch::kFloat);
    b->to(opts.device(), torch::kFloat);
    {
      torch::NoGradGuard ng;
      if (s.init_lora_weights == "true") {
        torch::nn::init::kaiming_uniform_(a->weight, std::sqrt(5.0));
        b->weight.zero_();
      } else if (s.init_lora_weights == "gaussian") {
        a->weight.normal_(0.0, 1.0 / static_cast<double>(s.r));
        b->weight.zero_();
      }  // "false": both keep nn.Linear's default init
    }
    lin->register_module("lora_A", a);
    lin->register_module("lora_B", b);
    lin->register_module("lora_settings", std::make_shared<LoraLinkImpl>(s.scaling(), s.lora_dropout));
    if (!lin->is_training()) { a->eval(); b->eval(); }
    targeted.push_back(name);
  }
  if (targeted.empty())
    refuse("PEFT target_modules matched no module of the policy", "check --peft.target_modules against the policy's module names");
  g_present.store(true, std::memory_order_relaxed);
  std::sort(targeted.begin(), targeted.end());
  return targeted;
}

void freeze_base(torch::nn::Module& root, const LoraSettings& s) {
  std::set<std::string> save_params;
  for (const auto& item : root.named_modules("", false))
    if (is_module_to_save(s, item.key()))
      for (const auto& p : item.value()->named_parameters()) save_params.insert(item.key() + "." + p.key());
  for (auto& p : root.named_parameters())
    p.value().set_requires_grad(is_lora_param(p.key()) || save_params.count(p.key()) > 0);
}

std::vector<std::pair<std::string, torch::Tensor>> adapter_tensors(torch::nn::Module& root, const LoraSettings& s) {
  std::set<std::string> save_params;
  for (const auto& item : root.named_modules("", false))
    if (is_module_to_save(s, item.key()))
      for (const auto& p : item.value()->named_parameters()) save_params.insert(item.key() + "." + p.key());
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : root.named_parameters())
    if (is_lora_param(p.key()) || save_params.count(p.key())) out["base_model.model." + p.key()] = p.value();
  return {out.begin(), out.end()};
}

void load_adapter_tensors(torch::nn::Module& root, const LoraSettings& s,
                          const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  auto want = adapter_tensors(root, s);
  std::map<std::string, torch::Tensor> have(tensors.begin(), tensors.end());
  torch::NoGradGuard ng;
  for (auto& [key, param] : want) {
    auto it = have.find(key);
    if (it == have.end())
      throw Error(ErrorKind::kCheckpoint, "adapter_model.safetensors has no tensor '" + key + "'", "adapter_model.safetensors",
                  "load the adapter with the adapter_config.json it was saved with");
    if (it->second.sizes() != param.sizes())
      throw Error(ErrorKind::kCheckpoint, "adapter tensor '" + key + "' has a different shape from the policy's", "adapter_model.safetensors",
                  "check r and the base policy's sizes");
    param.copy_(it->second);
    have.erase(it);
  }
  if (!have.empty())
    throw Error(ErrorKind::kCheckpoint, "adapter_model.safetensors has a tensor this policy has no place for: '" + have.begin()->first + "'",
                "adapter_model.safetensors", "check adapter_config.json's target_modules against the base policy");
}

void merge_adapters(torch::nn::Module& root) {
  torch::NoGradGuard ng;
  for (const auto& item : root.named_modules("", false)) {
    auto* lin = dynamic_cast<torch::nn::LinearImpl*>(item.value().get());
    if (!lin) continue;
    auto kids = lin->named_children();
    auto* link = kids.find("lora_settings");
    if (!link) continue;
    const double scaling = std::dynamic_pointer_cast<LoraLinkImpl>(*link)->scaling;
    auto a = kids["lora_A"]->as<torch::nn::LinearImpl>()->weight;
    auto b = kids["lora_B"]->as<torch::nn::LinearImpl>()->weight;
    auto delta = torch::matmul(b, a) * scaling;
    lin->weight.copy_((lin->weight.to(torch::kFloat) + delta).to(lin->weight.scalar_type()));
    b.zero_();
  }
}

bool is_adapter_parameter(const std::string& name) { return is_lora_param(name); }

bool adapters_present() { return g_present.load(std::memory_order_relaxed); }

torch::Tensor add_adapter(const torch::nn::LinearImpl& layer, const torch::Tensor& x, torch::Tensor y) {
  const auto kids = layer.named_children();
  if (kids.is_empty()) return y;
  const auto* link = kids.find("lora_settings");
  if (!link) return y;
  const auto& cfg = static_cast<const LoraLinkImpl&>(**link);
  const auto& a = kids["lora_A"]->as<torch::nn::LinearImpl>()->weight;
  const auto& b = kids["lora_B"]->as<torch::nn::LinearImpl>()->weight;
  auto h = x.scalar_type() == a.scalar_type() ? x : x.to(a.scalar_type());
  if (cfg.dropout > 0.0) h = torch::dropout(h, cfg.dropout, layer.is_training());
  auto delta = torch::linear(torch::linear(h, a), b) * cfg.scaling;
  return y + (delta.scalar_type() == y.scalar_type() ? delta : delta.to(y.scalar_type()));
}

}  // namespace lerobot::lora
