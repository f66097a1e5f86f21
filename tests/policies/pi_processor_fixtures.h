// What the π0/π0.5 processor reference tests share with their scripts
// (pi_processors_reference.py, pi_relative_actions_reference.py): the config both build, their
// stats formula, the reference files' tensors, and the reduced Gemma tokenizer in place of the
// gated Hub id.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/pi0/configuration_pi0.h"
#include "lerobot/policies/pi05/configuration_pi05.h"

namespace lerobot::testing {

inline fs::path pi_processor_data() { return fs::path(LEROBOT_SOURCE_DIR) / "tests/policies/data"; }

// google/paligemma-3b-pt-224 resolves to the reduced Gemma tokenizer; anything else is refused
// (no network here).
struct PaliGemmaTokenizerResolver {
  PaliGemmaTokenizerResolver() {
    set_model_folder_resolver([](const std::string& name, const std::vector<std::string>&, const std::string& flag) {
      if (name != "google/paligemma-3b-pt-224") throw std::runtime_error("unexpected model " + name + " for " + flag);
      return pi_processor_data() / "gemma_tokenizer";
    });
  }
  ~PaliGemmaTokenizerResolver() { set_model_folder_resolver(nullptr); }
};

// {"shape", "dtype", "values"} -> tensor (float32 or int64).
inline torch::Tensor reference_tensor(const Json& t) {
  const auto shape = t.at("shape").get<std::vector<int64_t>>();
  if (t.at("dtype").get<std::string>() == "int64")
    return torch::tensor(t.at("values").get<std::vector<int64_t>>(), torch::kInt64).reshape(shape);
  return torch::tensor(t.at("values").get<std::vector<float>>(), torch::kFloat32).reshape(shape);
}

// The scripts' config: type "pi0" or π0.5 otherwise, cameras top and wrist (3, 4, 4), state 5,
// action 4, on the CPU.
inline std::unique_ptr<PiConfigBase> pi_processor_config(bool pi0, int64_t tokenizer_max_length) {
  std::unique_ptr<PiConfigBase> c;
  if (pi0) c = std::make_unique<PI0Config>();
  else c = std::make_unique<PI05Config>();
  c->tokenizer_max_length = tokenizer_max_length;
  c->device = "cpu";
  c->input_features = {{"observation.images.top", {"VISUAL", {3, 4, 4}}},
                       {"observation.images.wrist", {"VISUAL", {3, 4, 4}}},
                       {"observation.state", {"STATE", {5}}}};
  c->input_feature_order = {"observation.images.top", "observation.images.wrist", "observation.state"};
  c->output_features = {{"action", {"ACTION", {4}}}};
  return c;
}

// The scripts' stats(): per element i, mean 0.1i-0.2, std 0.5+0.25i, min -1-0.5i, max 1+0.75i,
// q01 -0.8-0.25i, q99 0.9+0.5i; cameras (3, 1, 1).
inline Stats pi_processor_stats() {
  auto one = [](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    const torch::Tensor i = torch::arange(n, torch::kFloat32);
    return std::map<std::string, torch::Tensor>{
        {"mean", (0.1 * i - 0.2).reshape(shape)}, {"std", (0.5 + 0.25 * i).reshape(shape)},
        {"min", (-1 - 0.5 * i).reshape(shape)},   {"max", (1 + 0.75 * i).reshape(shape)},
        {"q01", (-0.8 - 0.25 * i).reshape(shape)}, {"q99", (0.9 + 0.5 * i).reshape(shape)}};
  };
  return {{"observation.images.top", one({3, 1, 1})},
          {"observation.images.wrist", one({3, 1, 1})},
          {"observation.state", one({5})},
          {"action", one({4})}};
}

}  // namespace lerobot::testing
