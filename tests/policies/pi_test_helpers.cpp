// Shared π0/π0.5 test helpers (see pi_test_helpers.h).
#include "pi_test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "reference_helpers.h"

namespace lerobot::testing {
namespace {

GemmaArch tiny_gemma(const Json& g, int64_t vocab) {
  GemmaArch a;
  a.width = g["width"], a.depth = g["depth"], a.mlp_dim = g["mlp_dim"];
  a.num_heads = g["num_heads"], a.num_kv_heads = g["num_kv_heads"], a.head_dim = g["head_dim"];
  a.vocab_size = vocab;
  return a;
}

// Rows of the script's prompts, cycled to `b` rows.
torch::Tensor cycled(const torch::Tensor& rows, int64_t b) {
  return rows.index_select(0, torch::arange(b, torch::kLong).remainder(rows.size(0)));
}

}  // namespace

std::string pi_reference_name(std::string name) {
  const std::string level = "vision_tower.vision_model.";
  if (auto at = name.find(level); at != std::string::npos) name.replace(at, level.size(), "vision_tower.");
  return name;
}

PaliGemmaArch pi_tiny_arch(const Json& tiny) {
  PaliGemmaArch a;
  const auto& v = tiny["vision"];
  a.vision.hidden_size = v["hidden_size"], a.vision.intermediate_size = v["intermediate_size"];
  a.vision.num_hidden_layers = v["num_hidden_layers"], a.vision.num_attention_heads = v["num_attention_heads"];
  a.vision.patch_size = v["patch_size"], a.vision.image_size = v["image_size"];
  a.vision.norms_first = true;
  const int64_t vocab = tiny["vocab_size"];
  a.text = tiny_gemma(tiny["gemma"]["gemma_2b"], vocab);
  a.expert = tiny_gemma(tiny["gemma"]["gemma_300m"], vocab);
  return a;
}

void pi_configure(PiConfigBase& c, const Json& tiny) {
  c.image_resolution = tiny["image_resolution"].get<std::vector<int64_t>>();
  c.chunk_size = tiny["chunk_size"], c.n_action_steps = tiny["n_action_steps"];
  c.max_state_dim = tiny["max_state_dim"], c.max_action_dim = tiny["max_action_dim"];
  c.tokenizer_max_length = tiny["tokenizer_max_length"], c.num_inference_steps = tiny["num_inference_steps"];
  c.device = "cpu";
  c.dtype = tiny["dtype"];
  if (tiny.contains("empty_cameras")) c.empty_cameras = tiny["empty_cameras"];
  if (tiny.contains("freeze_vision_encoder")) c.freeze_vision_encoder = tiny["freeze_vision_encoder"];
  if (tiny.contains("train_expert_only")) c.train_expert_only = tiny["train_expert_only"];
  for (const auto& [cam, shape] : tiny["cameras"].items()) {
    c.input_features[cam] = {"VISUAL", shape.get<std::vector<int64_t>>()};
    c.input_feature_order.push_back(cam);
  }
  c.input_features["observation.state"] = {"STATE", {tiny["state_dim"].get<int64_t>()}};
  c.input_feature_order.push_back("observation.state");
  c.output_features["action"] = {"ACTION", {tiny["action_dim"].get<int64_t>()}};
}

std::unique_ptr<PiPolicy> make_pi_policy(const std::string& kind, const Json& tiny,
                                         const std::function<void(PiConfigBase&)>& tweak) {
  const auto arch = pi_tiny_arch(tiny);
  if (kind == "pi0") {
    PI0Config c;
    pi_configure(c, tiny);
    if (tweak) tweak(c);
    return std::make_unique<PiPolicy>(c, arch);
  }
  PI05Config c;
  pi_configure(c, tiny);
  if (tiny.contains("rtc_training_max_delay")) c.rtc_training_max_delay = tiny["rtc_training_max_delay"];
  if (tiny.contains("use_visual_memory")) c.use_visual_memory = tiny["use_visual_memory"];
  if (tiny.contains("use_proprioceptive_memory")) c.use_proprioceptive_memory = tiny["use_proprioceptive_memory"];
  if (tiny.contains("memory_frames")) c.memory_frames = tiny["memory_frames"];
  if (tiny.contains("memory_stride")) c.memory_stride = tiny["memory_stride"];
  if (tiny.contains("memory_temporal_attention_every"))
    c.memory_temporal_attention_every = tiny["memory_temporal_attention_every"];
  if (tweak) tweak(c);
  return std::make_unique<PiPolicy>(c, arch);
}

std::unique_ptr<PiPolicy> make_pi_policy(const Json& layout) {
  return make_pi_policy(layout["kind"].get<std::string>(), layout["config"]["tiny"]);
}

void pi_fill(PiPolicy& policy) {
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (const auto& [name, t] : policy.state_dict()) named.emplace_back(pi_reference_name(name), t);
  std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  torch::NoGradGuard no_grad;
  for (size_t k = 0; k < named.size(); ++k) {
    const auto& [name, t] = named[k];
    if (!t.is_floating_point()) continue;
    const double offset = ends_with(name, "weight") && t.dim() == 1 ? 1.0 : 0.0;
    const double scale = ends_with(name, "q_proj.weight") || ends_with(name, "k_proj.weight") ? 0.5 : 0.1;
    t.copy_(formula_tensor(static_cast<int64_t>(k), t.sizes().vec(), scale, offset));
  }
}

Batch pi_batch(const Json& tiny) {
  const int64_t b = tiny["batch"], state = tiny["state_dim"], action = tiny["action_dim"];
  const int64_t chunk = tiny["chunk_size"];
  Batch batch;
  int64_t c = 0;
  for (const auto& [cam, shape] : tiny["cameras"].items()) {
    std::vector<int64_t> s = {b};
    for (auto d : shape) s.push_back(d.get<int64_t>());
    batch[cam] = formula_tensor(100 + c++, s, 0.5, 0.5);
  }
  batch["observation.state"] = formula_tensor(200, {b, state}, 1.0);
  batch["action"] = formula_tensor(201, {b, chunk, action}, 1.0);
  auto tokens = torch::tensor({2, 17, 301, 45, 9, 0, 2, 88, 7, 0, 0, 0}, torch::kLong).view({2, 6});
  tokens = cycled(tokens, b);
  auto mask = tokens.ne(0);
  mask.select(1, 0).fill_(true);
  batch["observation.language.tokens"] = tokens;
  batch["observation.language.attention_mask"] = mask;
  return batch;
}

torch::Tensor pi_noise(const Json& tiny) {
  return formula_tensor(300, {tiny["batch"].get<int64_t>(), tiny["chunk_size"].get<int64_t>(),
                              tiny["max_action_dim"].get<int64_t>()},
                        1.0);
}

torch::Tensor pi_flow_time(const Json& tiny) {
  return cycled(torch::tensor({0.3, 0.85}, torch::kFloat), tiny["batch"].get<int64_t>());
}

}  // namespace lerobot::testing
