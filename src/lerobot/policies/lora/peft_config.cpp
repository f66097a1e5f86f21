#include "lerobot/policies/lora/peft_config.h"

#include <algorithm>
#include <cctype>

#include "lerobot/common/error.h"

namespace lerobot::lora {
namespace {

[[noreturn]] void usage(const std::string& what, const std::string& where, const std::string& fix) {
  throw Error(ErrorKind::kUsage, what, where, fix);
}

int64_t as_int(const Json& v, const std::string& where) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    try {
      size_t used = 0;
      const auto s = v.get<std::string>();
      const int64_t n = std::stoll(s, &used);
      if (used == s.size()) return n;
    } catch (const std::exception&) {
    }
  }
  usage("expected an integer, got " + v.dump(), where, "pass a whole number");
}

std::vector<std::string> as_list(const Json& v, const std::string& where) {
  if (v.is_array()) {
    std::vector<std::string> out;
    for (const auto& e : v) {
      if (!e.is_string()) usage("expected a list of module names, got " + v.dump(), where, "pass e.g. '[q_proj,v_proj]'");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  usage("expected a list of module names, got " + v.dump(), where, "pass e.g. '[state_proj]' or '[]'");
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The policy classes LeRobot's PEFT wrap records in adapter_config.json's auto_mapping.
const char* kCommonProjections = "state_proj|action_in_proj|action_out_proj|action_time_mlp_in|action_time_mlp_out";

}  // namespace

std::optional<PeftConfig> peft_config_from_json(const Json& j) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_object()) usage("peft must be an object or null, got " + j.dump(), "peft", "pass --peft.r=16 etc., or drop --peft.*");
  PeftConfig c;
  for (const auto& [key, v] : j.items()) {
    const std::string where = "peft." + key;
    if (key == "target_modules") {
      if (v.is_null()) continue;
      if (v.is_string() && !v.get<std::string>().empty() && v.get<std::string>().front() == '[')
        c.target_modules = Json::parse(v.get<std::string>(), nullptr, false);  // a list given as text
      else if (v.is_string() || v.is_array())
        c.target_modules = v;
      else
        usage("target_modules must be a string or a list of strings, got " + v.dump(), where, "pass a regular expression or '[q_proj,v_proj]'");
      if (c.target_modules->is_discarded() || c.target_modules->is_array()) c.target_modules = Json(as_list(*c.target_modules, where));
    } else if (key == "full_training_modules") {
      if (!v.is_null()) c.full_training_modules = as_list(v, where);
    } else if (key == "method_type") {
      if (!v.is_string()) usage("method_type must be a string", where, "pass LORA");
      c.method_type = v.get<std::string>();
    } else if (key == "init_type") {
      if (v.is_null()) continue;
      if (v.is_boolean()) c.init_type = v.get<bool>() ? "true" : "false";
      else if (v.is_string()) c.init_type = v.get<std::string>();
      else usage("init_type must be a string, got " + v.dump(), where, "pass gaussian");
    } else if (key == "r") {
      c.r = as_int(v, where);
    } else if (key == "lora_alpha") {
      if (!v.is_null()) c.lora_alpha = as_int(v, where);
    } else {
      usage("unknown PEFT setting '" + key + "' (LeRobot's PeftConfig has target_modules, full_training_modules, method_type, "
            "init_type, r, lora_alpha)", where, "drop --" + where);
    }
  }
  return c;
}

Json to_json(const PeftConfig& c) {
  Json j;
  j["target_modules"] = c.target_modules ? *c.target_modules : Json(nullptr);
  j["full_training_modules"] = c.full_training_modules ? Json(*c.full_training_modules) : Json(nullptr);
  j["method_type"] = c.method_type;
  j["init_type"] = c.init_type ? Json(*c.init_type) : Json(nullptr);
  j["r"] = c.r;
  j["lora_alpha"] = c.lora_alpha ? Json(*c.lora_alpha) : Json(nullptr);
  return j;
}

std::optional<PeftDefaults> default_peft_targets(const std::string& type, bool use_proprioceptive_memory) {
  const std::string common = kCommonProjections;
  if (type == "smolvla")
    return PeftDefaults{Json(R"((model\.vlm_with_expert\.lm_expert\..*\.(q|v)_proj|model\.()" + common + "))"), {}};
  if (type == "pi0")
    return PeftDefaults{Json(R"((.*\.gemma_expert\..*\.self_attn\.(q|v)_proj|model\.()" + common + "))"), {}};
  if (type == "pi05") {
    std::vector<std::string> save;
    if (use_proprioceptive_memory) save.push_back("model.proprio_history_proj");
    return PeftDefaults{Json(R"((.*\.gemma_expert\..*\.self_attn\.(q|v)_proj|model\.()" + common + "))"), save};
  }
  return std::nullopt;
}

LoraSettings resolve_peft(const PeftConfig& c, const std::string& policy_type, bool has_pretrained_path,
                          bool use_proprioceptive_memory) {
  if (upper(c.method_type) != "LORA")
    usage("PEFT method '" + c.method_type + "' is not implemented (LORA is)", "peft.method_type", "drop --peft.method_type");
  auto defaults = default_peft_targets(policy_type, use_proprioceptive_memory);
  Json target = defaults ? defaults->target_modules : Json(nullptr);
  std::vector<std::string> save = defaults ? defaults->modules_to_save : std::vector<std::string>{};
  if (c.target_modules) target = *c.target_modules;
  if (c.full_training_modules) save = *c.full_training_modules;
  // LeRobot: `if not config_dict.get("target_modules")` (null, "" and [] alike).
  if (target.is_null() || (target.is_string() && target.get<std::string>().empty()) || (target.is_array() && target.empty()))
    usage("Policy '" + policy_type + "' does not define default target_modules. Please pass --peft.target_modules explicitly.",
          "peft.target_modules", "pass --peft.target_modules='[...]' naming the Linear layers to adapt");
  // LeRobot's base _validate_peft_config.
  if (!has_pretrained_path)
    usage("Training from scratch using PEFT is unlikely to yield good results. Supply a `policy.pretrained_path` to "
          "fine-tune an existing model.", "peft", "pass --policy.path=<pretrained policy>, or drop --peft.*");
  LoraSettings s;
  if (target.is_string()) s.target_regex = target.get<std::string>();
  else s.target_names = target.get<std::vector<std::string>>();
  s.modules_to_save = save;
  s.r = c.r;
  s.lora_alpha = c.lora_alpha.value_or(8);
  if (c.init_type) {
    std::string t = *c.init_type;
    std::string lower = t;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    s.init_lora_weights = (lower == "true" || lower == "false") ? lower : t;
  }
  return s;
}

Json adapter_config_json(const LoraSettings& s, const std::string& base, const std::string& policy_class,
                         const std::string& policy_module) {
  Json j;
  j["alora_invocation_tokens"] = nullptr;
  j["alpha_pattern"] = Json::object();
  j["arrow_config"] = nullptr;
  j["auto_mapping"] = {{"base_model_class", policy_class}, {"parent_library", policy_module}};
  j["base_model_name_or_path"] = base;
  j["bias"] = "none";
  j["corda_config"] = nullptr;
  j["ensure_weight_tying"] = false;
  j["eva_config"] = nullptr;
  j["exclude_modules"] = nullptr;
  j["fan_in_fan_out"] = false;
  j["inference_mode"] = true;
  if (s.init_lora_weights == "true") j["init_lora_weights"] = true;
  else if (s.init_lora_weights == "false") j["init_lora_weights"] = false;
  else j["init_lora_weights"] = s.init_lora_weights;
  j["kasa_config"] = nullptr;
  j["layer_replication"] = nullptr;
  j["layers_pattern"] = nullptr;
  j["layers_to_transform"] = nullptr;
  j["loftq_config"] = Json::object();
  j["lora_alpha"] = s.lora_alpha;
  j["lora_bias"] = false;
  j["lora_dropout"] = s.lora_dropout;
  j["lora_ga_config"] = nullptr;
  j["megatron_config"] = nullptr;
  j["megatron_core"] = "megatron.core";
  j["modules_to_save"] = s.modules_to_save;
  j["monteclora_config"] = nullptr;
  j["peft_type"] = "LORA";
  j["peft_version"] = "0.18.0";
  j["qalora_group_size"] = 16;
  j["r"] = s.r;
  j["rank_pattern"] = Json::object();
  j["revision"] = nullptr;
  j["target_modules"] = s.target_regex ? Json(*s.target_regex) : Json(s.target_names);
  j["target_parameters"] = nullptr;
  j["task_type"] = nullptr;
  j["trainable_token_indices"] = nullptr;
  j["use_bdlora"] = nullptr;
  j["use_dora"] = false;
  j["use_qalora"] = false;
  j["use_rslora"] = false;
  j["velora_config"] = nullptr;
  return j;
}

LoraSettings settings_from_adapter_config(const Json& j) {
  const std::string where = "adapter_config.json";
  auto refuse = [&](const std::string& what) {
    throw Error(ErrorKind::kCheckpoint, what + " (not implemented in lerobot.cpp)", where, "use a LoRA adapter without it");
  };
  if (j.value("peft_type", std::string()) != "LORA") refuse("peft_type " + j.value("peft_type", Json()).dump());
  if (j.value("use_dora", false)) refuse("use_dora");
  if (j.value("use_rslora", false)) refuse("use_rslora");
  if (j.value("fan_in_fan_out", false)) refuse("fan_in_fan_out");
  if (j.value("bias", std::string("none")) != "none") refuse("bias " + j["bias"].dump());
  if (j.value("lora_bias", false)) refuse("lora_bias");
  for (const char* k : {"alpha_pattern", "rank_pattern"})
    if (j.contains(k) && !j[k].is_null() && !j[k].empty()) refuse(k);
  for (const char* k : {"layers_to_transform", "layer_replication", "exclude_modules", "target_parameters"})
    if (j.contains(k) && !j[k].is_null()) refuse(k);
  LoraSettings s;
  const auto& t = j.at("target_modules");
  if (t.is_string()) s.target_regex = t.get<std::string>();
  else s.target_names = t.get<std::vector<std::string>>();
  if (j.contains("modules_to_save") && !j["modules_to_save"].is_null())
    s.modules_to_save = j["modules_to_save"].get<std::vector<std::string>>();
  s.r = j.at("r").get<int64_t>();
  s.lora_alpha = j.value("lora_alpha", int64_t{8});
  s.lora_dropout = j.value("lora_dropout", 0.0);
  const auto& init = j.value("init_lora_weights", Json(true));
  s.init_lora_weights = init.is_boolean() ? (init.get<bool>() ? "true" : "false") : init.get<std::string>();
  return s;
}

PeftConfig peft_config_from_settings(const LoraSettings& s) {
  PeftConfig c;
  c.target_modules = s.target_regex ? Json(*s.target_regex) : Json(s.target_names);
  c.full_training_modules = s.modules_to_save;
  c.init_type = s.init_lora_weights;
  c.r = s.r;
  c.lora_alpha = s.lora_alpha;
  return c;
}

}  // namespace lerobot::lora
