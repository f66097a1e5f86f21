// LeRobot's π checkpoint key remapping (see pi_checkpoint_keys.h).
#include "lerobot/policies/pi/pi_checkpoint_keys.h"

#include <regex>
#include <unordered_map>

#include "lerobot/common/strings.h"

namespace lerobot {
namespace {

// Python's re.match: anchored at the start only.
bool match_prefix(const std::regex& re, const std::string& s) {
  return std::regex_search(s, re, std::regex_constants::match_continuous);
}

// An insertion-ordered dict: assigning an existing key keeps its place and takes the new value.
class OrderedDict {
 public:
  void set(const std::string& key, const torch::Tensor& value) {
    auto [it, fresh] = index_.emplace(key, items_.size());
    if (fresh)
      items_.emplace_back(key, value);
    else
      items_[it->second].second = value;
  }
  std::vector<std::pair<std::string, torch::Tensor>> take() { return std::move(items_); }

 private:
  std::vector<std::pair<std::string, torch::Tensor>> items_;
  std::unordered_map<std::string, size_t> index_;
};

void note(std::vector<std::string>* log, std::string line) {
  if (log) log->push_back(std::move(line));
}

}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> fix_pi_state_dict_keys(const TensorMap& in, bool pi05,
                                                                          bool expert_adarms,
                                                                          std::vector<std::string>* log) {
  static const std::regex layer_norm(
      R"(paligemma_with_expert\.gemma_expert\.model\.layers\.\d+\.(input_layernorm|post_attention_layernorm)\.weight)");
  static const std::regex final_norm(R"(paligemma_with_expert\.gemma_expert\.model\.norm\.weight)");
  const std::string embed_tokens = "model.paligemma_with_expert.paligemma.model.language_model.embed_tokens.weight";
  OrderedDict fixed;
  for (const auto& [key, value] : in) {
    std::string new_key = key;
    if (match_prefix(layer_norm, key) && expert_adarms) {
      note(log, "Skipping layer norm key (adaRMS mismatch): " + key);
      continue;
    }
    if (match_prefix(final_norm, key) && expert_adarms) {
      note(log, "Skipping norm key (adaRMS mismatch): " + key);
      continue;
    }
    const std::string from_in = pi05 ? "action_time_mlp_in." : "time_mlp_in.";
    const std::string from_out = pi05 ? "action_time_mlp_out." : "time_mlp_out.";
    const std::string to_in = pi05 ? "time_mlp_in." : "action_time_mlp_in.";
    const std::string to_out = pi05 ? "time_mlp_out." : "action_time_mlp_out.";
    // str.replace replaces every occurrence; the prefix is the only one in any real key.
    auto replace_all = [](std::string s, const std::string& from, const std::string& to) {
      for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
      return s;
    };
    if (starts_with(key, from_in))
      new_key = replace_all(key, from_in, to_in);
    else if (starts_with(key, from_out))
      new_key = replace_all(key, from_out, to_out);
    if (pi05 && starts_with(key, "state_proj.")) {
      note(log, "Skipping state_proj key in pi05 mode: " + key);
      continue;
    }
    if (key.find("patch_embedding") != std::string::npos) note(log, "Vision embedding key might need handling: " + key);
    if (key == "model.paligemma_with_expert.paligemma.lm_head.weight" ||
        key == "paligemma_with_expert.paligemma.lm_head.weight")
      fixed.set(embed_tokens, value.clone());
    fixed.set(new_key, value);
  }
  return fixed.take();
}

TensorMap fix_pi_checkpoint_keys(const TensorMap& in, bool pi05, bool expert_adarms, std::vector<std::string>* log) {
  OrderedDict remapped;
  int64_t count = 0;
  for (auto& [key, value] : fix_pi_state_dict_keys(in, pi05, expert_adarms, log)) {
    if (starts_with(key, "model.")) {
      remapped.set(key, value);
    } else {
      remapped.set("model." + key, value);
      ++count;
    }
  }
  if (count > 0) note(log, "Remapped " + std::to_string(count) + " state dict keys");
  TensorMap out;
  for (auto& [key, value] : remapped.take()) out[key] = value;
  return out;
}

}  // namespace lerobot
