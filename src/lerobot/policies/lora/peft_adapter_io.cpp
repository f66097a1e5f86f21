#include "lerobot/policies/lora/peft_adapter_io.h"

#include <fstream>

#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/lora/peft_config.h"

namespace lerobot::lora {

void save_adapter_folder(const std::filesystem::path& dir, torch::nn::Module& policy, const LoraSettings& s,
                         const std::string& base, const std::string& policy_class, const std::string& policy_module,
                         const std::map<std::string, torch::Tensor>* weights) {
  std::filesystem::create_directories(dir);
  TensorMap tensors;
  const std::string prefix = "base_model.model.";  // adapter_tensors' keys: PEFT's, over the policy's names
  for (const auto& [key, t] : adapter_tensors(policy, s)) {
    torch::Tensor value = t;
    if (weights) {
      const auto found = weights->find(key.substr(prefix.size()));
      if (found == weights->end())
        throw Error(ErrorKind::kRuntime, "the gathered weights have no '" + key.substr(prefix.size()) + "'",
                    "adapter_model.safetensors", "gather the whole state dict before writing the adapters");
      value = found->second;
    }
    tensors[key] = value.detach().to(torch::kCPU).contiguous();
  }
  save_safetensors(dir / "adapter_model.safetensors", tensors);
  std::ofstream out(dir / "adapter_config.json");
  out << adapter_config_json(s, base, policy_class, policy_module).dump(2) << "\n";
  if (!out) throw Error(ErrorKind::kRuntime, "cannot write " + (dir / "adapter_config.json").string(), "adapter_config.json", "check the folder");
}

LoraSettings load_adapter_folder(const std::filesystem::path& dir, torch::nn::Module& policy) {
  const auto cfg_path = dir / "adapter_config.json";
  std::ifstream in(cfg_path);
  if (!in) throw Error(ErrorKind::kCheckpoint, "no adapter_config.json in " + dir.string(), cfg_path.string(), "pass a PEFT adapter folder");
  const auto s = settings_from_adapter_config(Json::parse(in));
  inject(policy, s);
  freeze_base(policy, s);
  auto loaded = load_safetensors(dir / "adapter_model.safetensors");
  load_adapter_tensors(policy, s, {loaded.begin(), loaded.end()});
  return s;
}

std::optional<std::string> adapter_base(const std::filesystem::path& dir) {
  const auto cfg_path = dir / "adapter_config.json";
  if (!std::filesystem::is_regular_file(cfg_path)) return std::nullopt;
  std::ifstream in(cfg_path);
  const Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("base_model_name_or_path") || !j["base_model_name_or_path"].is_string())
    return std::nullopt;
  return j["base_model_name_or_path"].get<std::string>();
}

}  // namespace lerobot::lora
