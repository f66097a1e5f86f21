// InferencePolicy: raw observation -> preprocess -> select_action -> unnormalize.
#include "lerobot/policies/inference.h"

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/graphed_inference.h"
#include "lerobot/policies/observation_inputs.h"
#include "lerobot/policies/pretrained_io.h"

namespace lerobot {

InferencePolicy::InferencePolicy(const fs::path& dir, torch::Device device, bool cuda_graphs)
    : policy_(load_pretrained(dir, std::nullopt, device)), processors_(load_policy_processors(dir)), device_(device) {
  if (const auto problems = normalizer_stat_problems(processors_.normalizer); !problems.empty())
    throw_checkpoint("the policy's normalizer cannot normalize: " + problems.front(),
                     (dir / processors_.normalizer_state_file()).string(), "copy the whole pretrained_model directory again");
  processors_.normalizer.to(device_);
  processors_.unnormalizer.to(torch::kCPU);
  policy_->eval();
  graphed_ = std::make_unique<GraphedChunkPredictor>(*policy_, cuda_graphs);
  graphed_->serve_select_action();
}

InferencePolicy::~InferencePolicy() = default;  // the predictor gives the policy its own chunks back

bool InferencePolicy::graphs_replaying() const { return graphed_->replaying(); }
std::string InferencePolicy::graphs_why_not() const { return graphed_->why_not(); }

Batch InferencePolicy::prepare(const std::map<std::string, torch::Tensor>& observation) const {
  const PolicyConfig& cfg = policy_->config();
  auto convert = [&](const std::string&, const std::string& key, const PolicyFeature& feature, torch::Tensor x) {
    const auto& shape = feature.shape;
    if (feature.type == "VISUAL") {
      if (x.dim() != 3 || shape.size() != 3)
        throw_usage("camera '" + key + "' must be a 3-D image without batch dim", key);
      const bool any_size = cfg.resizes_images();  // SmolVLA resizes every camera itself
      const bool chw = x.size(0) == shape[0] && (any_size || (x.size(1) == shape[1] && x.size(2) == shape[2]));
      const bool hwc = !chw && x.size(2) == shape[0] && (any_size || (x.size(0) == shape[1] && x.size(1) == shape[2]));
      if (!chw && !hwc)
        throw_usage("camera '" + key + "' has shape " + c10::str(x.sizes()) + ", expected (C,H,W)=" +
                        c10::str(c10::IntArrayRef(shape)) + " or (H,W,C)",
                    key, "resize the image to the resolution the policy was trained with");
      if (!chw) x = x.permute({2, 0, 1});
      x = x.scalar_type() == torch::kUInt8 ? x.to(torch::kFloat32).div(255.0) : x.to(torch::kFloat32);
    } else {
      if (x.sizes().vec() != shape)
        throw_usage("'" + key + "' has shape " + c10::str(x.sizes()) + ", expected " +
                        c10::str(c10::IntArrayRef(shape)) + " (config.json input_features, no batch dim)",
                    key, "give '" + key + "' the size the policy was trained with");
      x = x.to(torch::kFloat32);
    }
    return x.unsqueeze(0);
  };
  auto missing = [](const std::string& key) {
    throw_usage("the observation has no '" + key + "'", key, "the policy was trained with it");
  };
  return observation_inputs(cfg, processors_, observation, {task_}, device_, convert, missing);
}

torch::Tensor InferencePolicy::select_action(const std::map<std::string, torch::Tensor>& observation) {
  InferenceGuard guard;
  auto action = policy_->select_action(prepare(observation));  // (1, A)
  return processors_.postprocess_action(action.to(torch::kCPU)).squeeze(0);
}

torch::Tensor InferencePolicy::predict_action_chunk(const std::map<std::string, torch::Tensor>& observation) {
  InferenceGuard guard;
  auto chunk = graphed_->predict(prepare(observation));  // (1, chunk, A)
  return processors_.postprocess_action(chunk.to(torch::kCPU)).squeeze(0);
}

void InferencePolicy::reset() { policy_->reset(); }

}  // namespace lerobot
