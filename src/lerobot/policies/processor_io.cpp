// Reading and writing LeRobot's processor pipeline files (see processor_io.h).
#include "lerobot/policies/processor_io.h"

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/pi_config_base.h"
#include "lerobot/policies/pi_prompt.h"
#include "lerobot/policies/vlm/text_tokenizer.h"

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

namespace {
// The tokenizer files a checkpoint keeps under tokenizer/ (those the source folder has).
const char* const kTokenizerFiles[] = {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                                       "chat_template.jinja", "chat_template.json"};
constexpr const char* kTokenizerArtifact = "tokenizer";
constexpr const char* kTokensKey = "observation.language.tokens";
constexpr const char* kTokenMaskKey = "observation.language.attention_mask";
constexpr const char* kStateKey = "observation.state";
constexpr const char* kRelativeStep = "relative_actions_processor";
constexpr const char* kAbsoluteStep = "absolute_actions_processor";

// LeRobot's RelativeActionsProcessorStep on a batch: the action relative to the batch's state,
// when both are there (an observation without action passes unchanged).
Batch make_actions_relative(Batch batch, const std::optional<RelativeActions>& r) {
  if (!r || !r->enabled) return batch;
  auto action = batch.find("action"), state = batch.find(kStateKey);
  if (action != batch.end() && state != batch.end()) action->second = r->to_relative(action->second, state->second);
  return batch;
}

// The tokenizer of a folder, or of a model named by Hub id (`flag` names where the name came from).
std::shared_ptr<const TextTokenizer> named_tokenizer(const std::string& name, const std::string& flag, fs::path& dir) {
  dir = resolve_model_folder(name, {"tokenizer.json", "tokenizer_config.json"}, flag);
  return std::make_shared<const TextTokenizer>(TextTokenizer::from_folder(dir));
}
}  // namespace

std::vector<std::string> LanguageProcessing::prompts(const std::vector<std::string>& tasks,
                                                     const Batch& batch) const {
  if (prompt_step == kPi05PromptStep) {
    auto it = batch.find(kStateKey);
    if (include_state && it == batch.end())
      throw_usage("π0.5's prompt needs observation.state (LeRobot: \"State is required for PI05\")", "observation.state",
                  "give the policy the robot's state");
    return pi05_prompts(tasks, include_state ? it->second : torch::Tensor(), include_state);
  }
  std::vector<std::string> texts = tasks;
  if (newline)
    for (auto& t : texts)
      if (t.empty() || t.back() != '\n') t += '\n';
  return texts;
}

void LanguageProcessing::tokenize(const std::vector<std::string>& tasks, Batch& batch,
                                  const torch::Device& device) const {
  for (const auto& [key, t] : batch)  // one task per row
    if (t.dim() > 0 && t.size(0) != static_cast<int64_t>(tasks.size()))
      throw_usage("the batch has " + std::to_string(t.size(0)) + " rows ('" + key + "') but " +
                      std::to_string(tasks.size()) + " task strings",
                  "task", "give each observation its task");
  const std::vector<std::string> texts = prompts(tasks, batch);
  auto enc = tokenizer->encode_batch(texts, max_length, padding == "longest", padding_side != "left", truncation);
  batch[kTokensKey] = enc.input_ids.to(device);
  batch[kTokenMaskKey] = enc.attention_mask.to(device);
}

Batch PolicyProcessors::preprocess(const Batch& batch, const std::vector<std::string>& tasks) const {
  Batch renamed;
  if (rename_map.empty()) renamed = batch;
  else
    for (const auto& kv : batch) renamed[rename_feature_key(kv.first, rename_map)] = kv.second;
  if (language && !renamed.count(kTokensKey)) {
    if (tasks.empty())
      throw_usage("this policy reads the task in words and the batch carries no task strings", "task",
                  "give each observation its task (the dataset's tasks, or --env.task / the robot's task)");
    const torch::Device device = renamed.empty() ? torch::Device(torch::kCPU) : renamed.begin()->second.device();
    return tokenize_and_normalize(std::move(renamed), tasks, device);
  }
  return normalizer.normalize(make_actions_relative(std::move(renamed), relative_actions));
}

Batch PolicyProcessors::tokenize_and_normalize(Batch batch, const std::vector<std::string>& tasks,
                                               const torch::Device& device) const {
  batch = make_actions_relative(std::move(batch), relative_actions);  // before the normalizer (both layouts)
  if (!language) return normalizer.normalize(batch);
  if (language->after_normalizer()) {
    batch = normalizer.normalize(batch);
    language->tokenize(tasks, batch, device);
    return batch;
  }
  language->tokenize(tasks, batch, device);
  return normalizer.normalize(batch);
}

std::vector<std::string> PolicyProcessors::preprocessor_steps() const {
  std::vector<std::string> steps = {"rename_observations_processor", "to_batch_processor"};
  const bool pi05 = language && language->after_normalizer();
  if (pi05) {
    if (relative_actions) steps.push_back(kRelativeStep);
    steps.push_back("normalizer_processor");
    steps.push_back(kPi05PromptStep);
    steps.push_back("tokenizer_processor");
    steps.push_back("device_processor");
    return steps;
  }
  if (language) {
    if (!language->prompt_step.empty()) steps.push_back(language->prompt_step);
    steps.push_back("tokenizer_processor");
  }
  steps.push_back("device_processor");
  if (relative_actions) steps.push_back(kRelativeStep);
  steps.push_back("normalizer_processor");
  return steps;
}

std::string PolicyProcessors::normalizer_state_file() const {
  const auto steps = preprocessor_steps();
  size_t i = 0;
  while (steps[i] != "normalizer_processor") ++i;
  return "policy_preprocessor_step_" + std::to_string(i) + "_normalizer_processor.safetensors";
}

torch::Tensor PolicyProcessors::postprocess_action(const torch::Tensor& action, const torch::Tensor& state) const {
  torch::Tensor out = unnormalizer.unnormalize(Batch{{"action", action}}).at("action");
  return adds_state() ? relative_actions->to_absolute(out, state) : out;
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
  const std::string type = config.type();
  const bool pi = type == "pi0" || type == "pi05";
  if (auto lang = config.language_input()) {
    LanguageProcessing l;
    l.newline = lang->newline;
    l.max_length = lang->max_length;
    l.padding = lang->padding;
    if (type == "pi0") {
      l.prompt_step = kPi0NewLineStep;
    } else if (type == "pi05") {
      l.prompt_step = kPi05PromptStep;
      l.newline = false;
      if (const auto* c = dynamic_cast<const PI05Config*>(&config)) l.include_state = !c->use_proprioceptive_memory;
    } else {
      l.prompt_step = lang->newline ? kSmolVLANewLineStep : "";
    }
    l.tokenizer = named_tokenizer(lang->tokenizer_name, pi ? "policy.type=" + type + " (its PaliGemma tokenizer)"
                                                           : "policy.vlm_model_name",
                                  l.tokenizer_dir);
    p.language = std::move(l);
  }
  if (const auto* c = dynamic_cast<const PiConfigBase*>(&config)) {
    p.relative_actions = RelativeActions{c->use_relative_actions, c->relative_exclude_joints, c->action_feature_names};
  }
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
  Json steps = Json::array();
  for (const std::string& name : p.preprocessor_steps()) {
    if (name == "rename_observations_processor") {
      steps.push_back(step(name, Json{{"rename_map", rename}}));
    } else if (name == "normalizer_processor") {
      Json norm_step = step(name, normalizer_config(p.normalizer));
      norm_step["state_file"] = p.normalizer_state_file();
      steps.push_back(norm_step);
    } else if (name == "device_processor") {
      steps.push_back(step(name, Json{{"device", p.device}, {"float_dtype", nullptr}}));
    } else if (name == kRelativeStep) {
      const auto& r = *p.relative_actions;
      steps.push_back(step(name, Json{{"enabled", r.enabled},
                                      {"exclude_joints", r.exclude_joints},
                                      {"action_names", r.action_names ? Json(*r.action_names) : Json(nullptr)}}));
    } else if (name == "tokenizer_processor") {
      const auto& l = *p.language;
      Json tok = step("tokenizer_processor", Json{{"max_length", l.max_length},
                                                {"task_key", l.task_key},
                                                {"padding_side", l.padding_side},
                                                {"padding", l.padding},
                                                {"truncation", l.truncation},
                                                {"tokenizer_name", kTokenizerArtifact}});
      tok["artifacts"] = Json{{"tokenizer_name", kTokenizerArtifact}};
      steps.push_back(tok);
      const fs::path to = dir / kTokenizerArtifact;
      if (fs::absolute(l.tokenizer_dir).lexically_normal() != fs::absolute(to).lexically_normal()) {
        fs::create_directories(to);
        for (const char* f : kTokenizerFiles)
          if (fs::exists(l.tokenizer_dir / f)) write_file_atomic(to / f, read_file(l.tokenizer_dir / f));
      }
    } else {  // to_batch and the prompt steps: no config
      steps.push_back(step(name, Json::object()));
    }
  }
  Json pre = {{"name", kPreprocessorName}, {"steps", steps}};
  Json unnorm_step = step("unnormalizer_processor", normalizer_config(p.unnormalizer));
  unnorm_step["state_file"] = kUnnormalizerStateFile;
  Json post_steps = Json::array({unnorm_step});
  if (p.relative_actions) post_steps.push_back(step(kAbsoluteStep, Json{{"enabled", p.relative_actions->enabled}}));
  post_steps.push_back(step("device_processor", Json{{"device", "cpu"}, {"float_dtype", nullptr}}));
  Json post = {{"name", kPostprocessorName}, {"steps", post_steps}};
  save_safetensors(dir / p.normalizer_state_file(), p.normalizer.state_dict(), {});
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
      } else if (reg == kSmolVLANewLineStep || reg == kPi0NewLineStep || reg == kPi05PromptStep) {
        if (!p.language) p.language.emplace();
        p.language->prompt_step = reg;
        p.language->newline = reg != kPi05PromptStep;
        if (reg == kPi05PromptStep) p.language->include_state = cfg.value("include_state_in_prompt", true);
      } else if (reg == kRelativeStep) {
        RelativeActions r;
        try {
          r.enabled = cfg.value("enabled", false);
          r.exclude_joints = cfg.value("exclude_joints", std::vector<std::string>{});
          if (cfg.contains("action_names") && !cfg["action_names"].is_null())
            r.action_names = cfg["action_names"].get<std::vector<std::string>>();
        } catch (const std::exception& e) {
          throw_checkpoint(std::string("malformed relative_actions_processor config: ") + e.what(),
                           (dir / json_name).string());
        }
        p.relative_actions = std::move(r);
      } else if (reg == kAbsoluteStep) {
        // LeRobot's factory wires this step to the preprocessor's relative step, whose mask and
        // cached state it uses; the two must agree on `enabled`.
        const Json en = cfg.value("enabled", Json(false));
        if (!en.is_boolean())
          throw_checkpoint("absolute_actions_processor's enabled is not true/false: " + en.dump(), (dir / json_name).string());
        const bool enabled = en.get<bool>();
        if (!enabled && !p.relative_actions) p.relative_actions.emplace();
        if (!p.relative_actions || p.relative_actions->enabled != enabled)
          throw_checkpoint(std::string("absolute_actions_processor has enabled=") + (enabled ? "true" : "false") +
                               (p.relative_actions ? std::string(" but relative_actions_processor has enabled=") +
                                                         (p.relative_actions->enabled ? "true" : "false")
                                                   : std::string(" but the preprocessor has no relative_actions_processor")),
                           (dir / json_name).string(),
                           "the pipeline files must come from one checkpoint (set both steps' enabled alike)");
      } else if (reg == "tokenizer_processor") {
        if (!p.language) {
          p.language.emplace();
          p.language->prompt_step = "";
          p.language->newline = false;
        }
        auto& l = *p.language;
        l.max_length = cfg.value("max_length", l.max_length);
        l.padding = cfg.value("padding", l.padding);
        l.padding_side = cfg.value("padding_side", l.padding_side);
        l.truncation = cfg.value("truncation", l.truncation);
        l.task_key = cfg.value("task_key", l.task_key);
        const std::string name = cfg.value("tokenizer_name", std::string());
        const Json artifacts = s.value("artifacts", Json::object());
        if (artifacts.contains("tokenizer_name")) {
          l.tokenizer_dir = dir / artifacts.at("tokenizer_name").get<std::string>();
          if (!fs::is_directory(l.tokenizer_dir))
            throw_checkpoint("the tokenizer folder the pipeline names is missing", l.tokenizer_dir.string(),
                             "copy the whole pretrained_model directory, including its tokenizer/ folder");
          l.tokenizer = std::make_shared<const TextTokenizer>(TextTokenizer::from_folder(l.tokenizer_dir));
        } else if (!name.empty()) {  // older checkpoints name the tokenizer by its Hub id
          l.tokenizer = named_tokenizer(name, (dir / json_name).string() + ": tokenizer_name", l.tokenizer_dir);
        } else {
          throw_checkpoint("the tokenizer_processor step names no tokenizer", (dir / json_name).string());
        }
      } else if (reg != "to_batch_processor") {
        LOG_WARNING << (dir / json_name).string() << ": processor step '" << reg << "' is not supported; ignored";
      }
    }
  }
  if (!have_norm || !have_unnorm)
    throw_checkpoint(std::string("no ") + (have_norm ? "unnormalizer_processor" : "normalizer_processor") + " step",
                     dir.string(), "the pipeline files must come from an ACT, Diffusion, VQ-BeT, SmolVLA, π0 or π0.5 checkpoint");
  return p;
}

}  // namespace lerobot
