// Policy feature inference from dataset metadata (see policy_features.h).
#include "lerobot/train/policy_features.h"

#include <algorithm>

#include "lerobot/common/config/config.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot {

std::vector<std::pair<std::string, PolicyFeature>> dataset_to_policy_features(
    const DatasetMetadata& meta, const std::map<std::string, std::string>& rename_map) {
  std::vector<std::pair<std::string, PolicyFeature>> out;
  for (const auto& spec : meta.features) {
    FeatureSpec f = spec;
    if (auto r = rename_map.find(f.key); r != rename_map.end()) f.key = r->second;
    PolicyFeature pf;
    if (f.is_camera()) {
      if (f.shape.size() != 3)
        throw_data("camera feature '" + f.key + "' must have a 3-D shape", (meta.root / "meta/info.json").string());
      pf.type = "VISUAL";
      pf.shape = f.shape;
      // info.json stores (H, W, C) with names [height, width, channels]: transpose to (C, H, W).
      bool channel_last = false;
      if (f.names.is_array() && f.names.size() == 3 && f.names[2].is_string()) {
        const std::string n = f.names[2].get<std::string>();
        channel_last = n == "channels" || n == "channel";
      }
      if (channel_last) pf.shape = {f.shape[2], f.shape[0], f.shape[1]};
    } else if (f.key == "observation.environment_state") {
      pf.type = "ENV";
      pf.shape = f.shape;
    } else if (starts_with(f.key, "observation.")) {
      pf.type = "STATE";
      pf.shape = f.shape;
    } else if (starts_with(f.key, "action")) {
      pf.type = "ACTION";
      pf.shape = f.shape;
    } else {
      continue;
    }
    out.emplace_back(f.key, pf);
  }
  return out;
}

void fill_policy_features(PolicyConfig& config, const DatasetMetadata& meta,
                          const std::map<std::string, std::string>& rename_map) {
  const auto features = dataset_to_policy_features(meta, rename_map);
  bool has_action = false;
  for (const auto& [key, f] : features) has_action = has_action || key == "action";
  if (!has_action) {
    std::string keys;
    for (const auto& f : meta.features)
      if (!is_default_feature(f.key)) keys += (keys.empty() ? "'" : ", '") + f.key + "'";
    std::string current;
    for (const auto& [k, v] : rename_map) current += (current.empty() ? "" : ", ") + ("\"" + k + "\": \"" + v + "\"");
    const std::string suggestion = suggested_rename_map(meta);
    throw_data("the dataset has no 'action' feature" +
                   std::string(rename_map.empty() ? "" : " after --rename_map={" + current + "}") +
                   " (its features: " + keys + ")",
               (meta.root / "meta/info.json").string(),
               suggestion.empty() ? "a training dataset needs an 'action' feature (the policy's output)"
                                  : "map the dataset's keys onto LeRobot's names: " + suggestion);
  }
  config.output_features.clear();
  for (const auto& [key, f] : features)
    if (f.type == "ACTION") config.output_features[key] = f;
  if (config.input_features.empty()) {
    config.input_feature_order.clear();
    for (const auto& [key, f] : features) {
      if (f.type == "ACTION") continue;
      config.input_features[key] = f;
      config.input_feature_order.push_back(key);
    }
  }
  // LeRobot's make_policy: a config with an action_feature_names field (π0/π0.5's, which
  // relative_exclude_joints matches) gets the names of the dataset feature that is "action" after
  // renaming (a names dict gives its keys, as Python's list() of it); no names leave it as it is.
  const auto fields = field_names(config);
  if (std::find(fields.begin(), fields.end(), "action_feature_names") == fields.end()) return;
  for (const auto& spec : meta.features) {
    auto r = rename_map.find(spec.key);
    if ((r == rename_map.end() ? spec.key : r->second) != "action") continue;
    if (spec.names.is_null()) break;
    std::vector<std::string> names;
    if (spec.names.is_object())
      for (auto it = spec.names.begin(); it != spec.names.end(); ++it) names.push_back(it.key());
    else
      for (const auto& n : spec.names) names.push_back(n.is_string() ? n.get<std::string>() : n.dump());
    apply_json(config, Json{{"action_feature_names", names}}, "policy");
    break;
  }
}

std::string suggested_rename_map(const DatasetMetadata& meta) {
  std::vector<std::pair<std::string, std::string>> pairs;
  bool action_taken = false, state_taken = false;
  for (const auto& f : meta.features) {
    if (is_default_feature(f.key) || f.key == "action" || starts_with(f.key, "observation.")) {
      action_taken = action_taken || f.key == "action";
      state_taken = state_taken || f.key == "observation.state";
    }
  }
  for (const auto& f : meta.features) {
    const std::string& k = f.key;
    if (is_default_feature(k) || k == "action" || starts_with(k, "observation.") || f.is_string()) continue;
    if (f.is_camera()) {
      pairs.emplace_back(k, "observation.images." + k);
    } else if (!action_taken && (starts_with(k, "action") || k == "act")) {
      pairs.emplace_back(k, "action");
      action_taken = true;
    } else if (!state_taken && (k == "state" || k == "states" || k == "qpos" || k == "proprio" ||
                                k.find("state") != std::string::npos)) {
      pairs.emplace_back(k, "observation.state");
      state_taken = true;
    }
  }
  if (pairs.empty()) return "";
  std::string out = "--rename_map='{";
  for (size_t i = 0; i < pairs.size(); ++i)
    out += (i ? ", " : "") + ("\"" + pairs[i].first + "\": \"" + pairs[i].second + "\"");
  return out + "}'";
}

}  // namespace lerobot
