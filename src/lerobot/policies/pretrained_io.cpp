// Saving and loading pretrained_model directories (see pretrained_io.h).
#include "lerobot/policies/pretrained_io.h"

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/lora/peft_adapter_io.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/register_policies.h"

namespace lerobot {

std::string policy_config_json(const PolicyConfig& config) {
  // to_json() takes a mutable Config because visit() hands out references; it only reads them.
  Json j = to_json(const_cast<PolicyConfig&>(config));
  Json ordered = Json::object();
  for (const auto& k : config.ordered_input_keys()) ordered[k] = j["input_features"][k];
  j["input_features"] = ordered;
  if (j.contains("pretrained_backbone_weights") && j["pretrained_backbone_weights"].is_string()) {
    const std::string w = j["pretrained_backbone_weights"].get<std::string>();
    if (w.find('/') != std::string::npos || fs::exists(w)) j["pretrained_backbone_weights"] = nullptr;
  }
  return dump_pretty(j, 4);
}

std::unique_ptr<PolicyConfig> load_policy_config(const fs::path& path, const std::optional<std::string>& expected_type) {
  register_policy_configs();
  if (!fs::exists(path))
    throw_checkpoint("config.json is missing", path.string(), "point at a LeRobot pretrained_model directory");
  Json j;
  try {
    j = Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("not valid JSON: ") + e.what(), path.string());
  }
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw_checkpoint("config.json has no \"type\"", path.string(), "the file must be a LeRobot policy config");
  const std::string type = j["type"].get<std::string>();
  if (expected_type && type != *expected_type)
    throw_checkpoint("the checkpoint is a '" + type + "' policy, not '" + *expected_type + "'", path.string(),
                     "use --policy.type=" + type + " or point at a " + *expected_type + " checkpoint");
  auto& entries = PolicyRegistry::entries();
  auto it = entries.find(type);
  if (it == entries.end())
    throw_checkpoint("policy type '" + type + "' is not supported by lerobot.cpp", path.string(),
                     "supported: " + [] {
                       std::string s;
                       for (const auto& n : PolicyRegistry::names()) s += (s.empty() ? "" : ", ") + n;
                       return s;
                     }());
  std::unique_ptr<PolicyConfig> config = it->second();
  try {
    apply_json(*config, j, "config.json");
    config->validate();  // e.g. a chunk_size of 0 is refused here, not deep inside the model
  } catch (const Error& e) {
    throw_checkpoint(e.problem(), path.string() + (e.where().empty() ? "" : " (" + e.where() + ")"), e.fix());
  }
  config->input_feature_order.clear();
  if (j.contains("input_features") && j["input_features"].is_object())
    for (auto f = j["input_features"].begin(); f != j["input_features"].end(); ++f)
      config->input_feature_order.push_back(f.key());
  return config;
}

void save_pretrained(const Policy& policy, const fs::path& dir) {
  fs::create_directories(dir);
  write_file_atomic(dir / kConfigFile, policy_config_json(policy.config()));
  save_safetensors(dir / kModelFile, policy.state_dict());
}

PolicyPtr load_pretrained_weights(const PolicyConfig& config, const fs::path& dir,
                                  const std::optional<torch::Device>& device) {
  if (config.use_peft) {
    // LeRobot's make_policy with use_peft: the base policy from adapter_config.json's
    // base_model_name_or_path (with this config), then PeftModel.from_pretrained(is_trainable=True).
    const fs::path adapter_config = dir / "adapter_config.json";
    if (!fs::exists(adapter_config))
      throw_checkpoint("config.json says use_peft: true but the folder has no adapter_config.json",
                       adapter_config.string(), "point at the pretrained_model folder of a PEFT run");
    const Json ac = load_json_or_yaml(adapter_config);
    const std::string base = ac.value("base_model_name_or_path", Json(nullptr)).is_string()
                                 ? ac["base_model_name_or_path"].get<std::string>() : std::string();
    if (base.empty())
      throw_checkpoint("No pretrained model name found in adapter config. Can't instantiate the pre-trained policy on "
                       "which the adapter was trained.", adapter_config.string(),
                       "set base_model_name_or_path to the base policy's pretrained_model folder");
    // A local folder as it is; a Hub id through the installed resolver (lerobot-cpp's fetches it
    // into $HF_HUB_CACHE, as LeRobot's from_pretrained(base_model_name_or_path) does).
    fs::path base_dir;
    try {
      base_dir = resolve_model_folder(base, {kConfigFile, kModelFile}, "base_model_name_or_path");
    } catch (const Error& e) {
      throw_checkpoint("the adapter's base policy '" + base + "' cannot be found: " + e.problem(), adapter_config.string(),
                       "set base_model_name_or_path to the base policy's pretrained_model folder or Hub id");
    }
    // The base is built from this config less use_peft (the flag is restored whatever happens).
    auto& flag = const_cast<PolicyConfig&>(config).use_peft;
    flag = false;
    PolicyPtr policy;
    try {
      policy = load_pretrained_weights(config, base_dir, device);
    } catch (...) {
      flag = true;
      throw;
    }
    flag = true;
    lora::load_adapter_folder(dir, *policy);
    if (device) policy->to(*device);
    policy->eval();
    return policy;
  }
  PolicyBuildOptions opts;
  opts.load_pretrained_backbone = false;  // every weight comes from model.safetensors
  PolicyPtr policy = make_policy(config, opts);
  const fs::path model = dir / kModelFile;
  if (!fs::exists(model))
    throw_checkpoint("model.safetensors is missing", model.string(), "point at a complete pretrained_model directory");
  TensorMap weights;
  try {
    weights = load_safetensors(model);
  } catch (const Error& e) {  // a damaged weights file is a checkpoint problem, not a dataset one
    if (e.kind() != ErrorKind::kData) throw;
    throw_checkpoint(e.problem(), e.where().empty() ? model.string() : e.where(),
                     "model.safetensors is damaged: copy the whole pretrained_model directory again");
  }
  policy->load_state_dict(policy->adapt_checkpoint_keys(std::move(weights), model.string()), model.string());
  if (device) policy->to(*device);
  policy->eval();
  return policy;
}

PolicyPtr load_pretrained(const fs::path& dir, const std::optional<std::string>& expected_type,
                          const std::optional<torch::Device>& device) {
  return load_pretrained_weights(*load_policy_config(dir / kConfigFile, expected_type), dir, device);
}

}  // namespace lerobot
