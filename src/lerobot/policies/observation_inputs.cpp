// observation_inputs(): see observation_inputs.h.
#include "lerobot/policies/observation_inputs.h"

#include "lerobot/policies/padded_inputs.h"

namespace lerobot {

Batch observation_inputs(const PolicyConfig& cfg, const PolicyProcessors& processors,
                         const std::map<std::string, torch::Tensor>& observation,
                         const std::vector<std::string>& tasks, const torch::Device& device,
                         const ObservationConvert& convert, const MissingObservation& missing,
                         torch::Tensor* raw_state) {
  Batch batch;
  for (const auto& [name, x] : observation) {
    std::string key = name;
    auto r = processors.rename_map.find(key);
    if (r != processors.rename_map.end()) key = r->second;
    auto feat = cfg.input_features.find(key);
    if (feat == cfg.input_features.end()) continue;  // extra robot or env fields are ignored
    batch[key] = convert(name, key, feat->second, x).to(device);
  }
  // A camera the policy fills when absent (π, SmolVLA) may be left out too; the policy refuses a
  // batch with none of its cameras.
  for (const auto& kv : cfg.input_features)
    if (!batch.count(kv.first) && !cfg.is_placeholder_feature(kv.first) &&
        !(kv.second.type == "VISUAL" && fills_absent_cameras(cfg)))
      missing(kv.first);
  if (auto state = batch.find("observation.state"); raw_state && state != batch.end()) *raw_state = state->second;
  // SmolVLA and π0 tokenize, then normalize; π0.5 normalizes, then builds its prompt from the state.
  return processors.tokenize_and_normalize(std::move(batch), tasks, device);
}

}  // namespace lerobot
