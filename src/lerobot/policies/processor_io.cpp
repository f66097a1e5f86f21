// Reading and writing LeRobot's processor pipeline files (see processor_io.h).
#include "lerobot/policies/processor_io.h"

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/safetensors_torch.h"

namespace lerobot {

std::string rename_feature_key(const std::string& key, const std::map<std::string, std::string>& rename_map) {
  if (auto it = rename_map.find(key); it != rename_map.end()) return it->second;
  for (const std::string suffix : {"_is_pad", "_padding_mask"}) {
    if (key.size() <= suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (auto it = rename_map.find(key.substr(0, key.size() - suffix.size())); it != rename_map.end())
      return it->second + suffix;
  }
  return key;
}

Stats rename_stats(const Stats& stats, const std::map<std::string, std::string>& rename_map) {
  if (rename_map.empty()) return stats;
  Stats out;
  for (const auto& [key, s] : stats) {
    auto it = rename_map.find(key);
    out[it == rename_map.end() ? key : it->second] = s;
  }
  return out;
}

Batch PolicyProcessors::preprocess(const Batch& batch) const {
  if (rename_map.empty()) return normalizer.normalize(batch);
  Batch renamed;
  for (const auto& kv : batch) renamed[rename_feature_key(kv.first, rename_map)] = kv.second;
  return normalizer.normalize(renamed);
}

torch::Tensor PolicyProcessors::postprocess_action(const torch::Tensor& action) const {
  return unnormalizer.unnormalize(Batch{{"action", action}}).at("action");
}

PolicyProcessors make_policy_processors(const PolicyConfig& config, const Stats& stats, const std::string& device) {
  std::vector<std::pair<std::string, PolicyFeature>> in_out, out;
  for (const auto& k : config.ordered_input_keys()) in_out.emplace_back(k, config.input_features.at(k));
  for (const auto& kv : config.output_features) {
    in_out.emplace_back(kv.first, kv.second);
    out.emplace_back(kv.first, kv.second);
  }
  PolicyProcessors p;
  p.device = device;
  p.normalizer = Normalizer(in_out, config.normalization_mapping(), stats);
  p.unnormalizer = Normalizer(out, config.normalization_mapping(), stats);
  return p;
}

namespace {
Json normalizer_config(const Normalizer& n) {
  Json features = Json::object();
  for (const auto& f : n.features()) features[f.first] = Json{{"type", f.second.type}, {"shape", f.second.shape}};
  Json norm_map = Json::object();
  for (const auto& kv : n.norm_map()) norm_map[kv.first] = kv.second;
  return Json{{"eps", n.eps()}, {"features", features}, {"norm_map", norm_map}};
}

Json step(const std::string& name, Json config) {
  return Json{{"registry_name", name}, {"config", std::move(config)}};
}

Normalizer read_normalizer(const Json& cfg, const fs::path& dir, const std::string& state_file,
                           const std::string& json_name) {
  std::vector<std::pair<std::string, PolicyFeature>> features;
  std::map<std::string, std::string> norm_map;
  double eps = 1e-8;
  try {
    for (auto it = cfg.at("features").begin(); it != cfg.at("features").end(); ++it)
      features.emplace_back(it.key(), it.value().get<PolicyFeature>());
    for (auto it = cfg.at("norm_map").begin(); it != cfg.at("norm_map").end(); ++it)
      norm_map[it.key()] = it.value().get<std::string>();
    if (cfg.contains("eps")) eps = cfg.at("eps").get<double>();
  } catch (const std::exception& e) {
    throw_checkpoint(std::string("malformed normalizer step config: ") + e.what(), (dir / json_name).string());
  }
  Normalizer n(features, norm_map, Stats{}, eps);
  if (!state_file.empty()) {
    const fs::path path = dir / state_file;
    if (!fs::exists(path))
      throw_checkpoint("normalizer state file is missing", path.string(),
                       "copy the whole pretrained_model directory, including the processor safetensors files");
    n.load_state_dict(load_safetensors(path), path.string());
  }
  return n;
}

Json read_json(const fs::path& path) {
  if (!fs::exists(path))
    throw_checkpoint("processor file is missing", path.string(),
                     "a LeRobot pretrained_model directory has policy_preprocessor.json and policy_postprocessor.json");
  try {
    return Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("not valid JSON: ") + e.what(), path.string());
  }
}
}  // namespace

void save_policy_processors(const fs::path& dir, const PolicyProcessors& p) {
  fs::create_directories(dir);
  Json rename = Json::object();
  for (const auto& kv : p.rename_map) rename[kv.first] = kv.second;
  Json norm_step = step("normalizer_processor", normalizer_config(p.normalizer));
  norm_step["state_file"] = kNormalizerStateFile;
  Json pre = {{"name", kPreprocessorName},
              {"steps", Json::array({step("rename_observations_processor", Json{{"rename_map", rename}}),
                                     step("to_batch_processor", Json::object()),
                                     step("device_processor", Json{{"device", p.device}, {"float_dtype", nullptr}}),
                                     norm_step})}};
  Json unnorm_step = step("unnormalizer_processor", normalizer_config(p.unnormalizer));
  unnorm_step["state_file"] = kUnnormalizerStateFile;
  Json post = {{"name", kPostprocessorName},
               {"steps", Json::array({unnorm_step, step("device_processor",
                                                        Json{{"device", "cpu"}, {"float_dtype", nullptr}})})}};
  save_safetensors(dir / kNormalizerStateFile, p.normalizer.state_dict(), {});
  save_safetensors(dir / kUnnormalizerStateFile, p.unnormalizer.state_dict(), {});
  write_file_atomic(dir / (std::string(kPreprocessorName) + ".json"), dump_pretty(pre, 2));
  write_file_atomic(dir / (std::string(kPostprocessorName) + ".json"), dump_pretty(post, 2));
}

PolicyProcessors load_policy_processors(const fs::path& dir) {
  PolicyProcessors p;
  bool have_norm = false, have_unnorm = false;
  for (const char* name : {kPreprocessorName, kPostprocessorName}) {
    const std::string json_name = std::string(name) + ".json";
    Json j = read_json(dir / json_name);
    if (!j.contains("steps") || !j["steps"].is_array())
      throw_checkpoint("no \"steps\" list", (dir / json_name).string());
    for (const auto& s : j["steps"]) {
      const std::string reg = s.value("registry_name", std::string());
      const Json cfg = s.value("config", Json::object());
      const std::string state = s.value("state_file", std::string());
      if (reg == "rename_observations_processor") {
        const Json rename = cfg.value("rename_map", Json::object());
        for (auto it = rename.begin(); it != rename.end(); ++it) p.rename_map[it.key()] = it.value().get<std::string>();
      } else if (reg == "device_processor") {
        if (std::string(name) == kPreprocessorName && cfg.contains("device") && cfg["device"].is_string())
          p.device = cfg["device"].get<std::string>();
      } else if (reg == "normalizer_processor") {
        p.normalizer = read_normalizer(cfg, dir, state, json_name);
        have_norm = true;
      } else if (reg == "unnormalizer_processor") {
        p.unnormalizer = read_normalizer(cfg, dir, state, json_name);
        have_unnorm = true;
      } else if (reg != "to_batch_processor") {
        LOG_WARNING << (dir / json_name).string() << ": processor step '" << reg << "' is not supported; ignored";
      }
    }
  }
  if (!have_norm || !have_unnorm)
    throw_checkpoint(std::string("no ") + (have_norm ? "unnormalizer_processor" : "normalizer_processor") + " step",
                     dir.string(), "the pipeline files must come from an ACT, Diffusion or VQ-BeT checkpoint");
  return p;
}

}  // namespace lerobot
