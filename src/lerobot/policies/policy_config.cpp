// PolicyConfig base fields and PolicyFeature JSON conversion.
#include "lerobot/policies/policy_config.h"

#include "lerobot/common/config/flags.h"
#include "lerobot/common/fs.h"

#include <algorithm>

namespace lerobot {

void to_json(Json& j, const PolicyFeature& f) { j = Json{{"type", f.type}, {"shape", f.shape}}; }

void from_json(const Json& j, PolicyFeature& f) {
  f.type = j.at("type").get<std::string>();
  f.shape = j.at("shape").get<std::vector<int64_t>>();
  if (f.type != "VISUAL" && f.type != "STATE" && f.type != "ENV" && f.type != "ACTION" &&
      f.type != "LANGUAGE" && f.type != "REWARD")
    throw std::invalid_argument("feature type must be VISUAL, STATE, ENV or ACTION, not " + f.type);
}

void PolicyConfig::visit_base(FieldVisitor& v) {
  field(v, "n_obs_steps", n_obs_steps, "Number of observation steps the policy sees");
  field(v, "input_features", input_features, "Input features {key: {type, shape}} (derived from the dataset when empty)");
  field(v, "output_features", output_features, "Output features {key: {type, shape}} (derived from the dataset)");
  field(v, "device", device, "Device: cpu or cuda (auto-selected when null)");
  field(v, "use_amp", use_amp, "Use automatic mixed precision at inference (training uses --accelerator.mixed_precision)");
  field(v, "use_peft", use_peft, "Set by a PEFT run: the folder holds adapters on the base policy adapter_config.json names");
  // push_to_hub defaults to false (LeRobot: true, and then its validate() refuses every run
  // without repo_id): commands that name no repo (the demo, local datasets) keep working.
  field(v, "push_to_hub", push_to_hub,
        "Publish pretrained_model/ and a model card to the Hub after training (needs --policy.repo_id and a "
        "write token: HF_TOKEN or `hf auth login`; LeRobot's default is true, ours false)");
  field(v, "repo_id", repo_id, "Hub repo id for the trained policy (namespace/name; a bare name: your namespace)");
  field(v, "private", private_, "Create the Hub repo private (null: the Hub's default, public unless the org's is private)");
  field(v, "tags", tags, "Extra Hub tags for the model card (robotics, lerobot and the policy type are always there)");
  field(v, "license", license, "Model card license (default apache-2.0)");
  field(v, "pretrained_path", pretrained_path, "Directory of a pretrained_model to start from (set by --policy.path)");
  field(v, "pretrained_revision", pretrained_revision, "Hub revision of the pretrained policy");
}

std::vector<std::string> PolicyConfig::ordered_input_keys() const {
  std::vector<std::string> out;
  for (const auto& k : input_feature_order)
    if (input_features.count(k) && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  for (const auto& kv : input_features)
    if (std::find(out.begin(), out.end(), kv.first) == out.end()) out.push_back(kv.first);
  return out;
}

std::vector<std::string> PolicyConfig::image_feature_keys() const {
  std::vector<std::string> out;
  for (const auto& k : ordered_input_keys())
    if (input_features.at(k).type == "VISUAL") out.push_back(k);
  return out;
}

bool take_policy_path_flag(std::vector<Flag>& flags, ChoicePtr<PolicyConfig>& policy) {
  bool found = false;
  const std::string path = take_flag(flags, "policy.path", &found);
  if (!found) return false;
  for (const auto& f : flags)
    if (f.key == "policy.type")
      throw_usage("--policy.path and --policy.type are mutually exclusive", "--policy.type",
                  "drop --policy.type: the type comes from " + path + "/config.json");
  const fs::path cfg_file = fs::path(path) / "config.json";
  if (!fs::exists(cfg_file))
    throw_usage("no config.json in the policy directory", cfg_file.string(),
                "--policy.path must point at a pretrained_model directory");
  const Json j = load_json_or_yaml(cfg_file);
  apply_choice_json(policy, j, "policy");
  policy->pretrained_path = path;
  // The checkpoint's input order (camera token order) is config.json's key order.
  policy->input_feature_order.clear();
  if (j.contains("input_features") && j["input_features"].is_object())
    for (auto f = j["input_features"].begin(); f != j["input_features"].end(); ++f)
      policy->input_feature_order.push_back(f.key());
  return true;
}

}  // namespace lerobot
