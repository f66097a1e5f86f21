// SmolVLA backbone and expert weights (see vlm_weights.h).
#include "lerobot/policies/smolvla/vlm_weights.h"

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"

namespace lerobot {

void init_expert_weights(SmolVLMWithExpertImpl& m, double std) {
  init_transformers_weights(*m.lm_expert, std);
  for (int64_t i = 0; i < m.num_vlm_layers(); ++i) {
    const int64_t e = m.expert_layer_for(i);
    if (e < 0 || !m.is_cross_layer(i)) continue;
    auto& attn = *m.lm_expert->layers[e]->self_attn;
    attn.k_proj->reset_parameters();
    attn.v_proj->reset_parameters();
  }
}

void load_vlm_weights(SmolVLMImpl& vlm, const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw_checkpoint("load_vlm_weights is set but the backbone folder has no *.safetensors", dir.string(),
                     "download the SmolVLM model's weights there, or pass --policy.load_vlm_weights=false");
  auto targets = vlm.named_parameters(/*recurse=*/true);
  std::map<std::string, bool> loaded;
  torch::NoGradGuard no_grad;
  for (const auto& file : files) {
    for (const auto& [name, t] : load_safetensors(file)) {
      auto* target = targets.find(name);
      if (target == nullptr) continue;  // text layers past num_vlm_layers
      if (target->sizes() != t.sizes())
        throw_checkpoint("'" + name + "' has shape " + c10::str(t.sizes()) + ", the backbone expects " +
                             c10::str(target->sizes()),
                         file.string(), "the folder's config.json and weights must be of the same model");
      target->copy_(t.to(target->scalar_type()));
      loaded[name] = true;
    }
  }
  std::vector<std::string> missing;
  for (const auto& p : targets)
    if (!loaded.count(p.key())) missing.push_back(p.key());
  if (!missing.empty())
    throw_checkpoint(std::to_string(missing.size()) + " backbone tensors are not in the weights, e.g. '" + missing[0] + "'",
                     dir.string(), "use the SmolVLM checkpoint that goes with this config.json");
}

}  // namespace lerobot
