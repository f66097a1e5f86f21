// InferencePolicy: raw observation -> preprocess -> select_action -> unnormalize.
#include "lerobot/policies/inference.h"

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/graphed_inference.h"
#include "lerobot/policies/observation_inputs.h"
#include "lerobot/policies/padded_inputs.h"
#include "lerobot/policies/pretrained_io.h"

namespace lerobot {

InferencePolicy::InferencePolicy(const fs::path& dir, torch::Device device, bool cuda_graphs)
    : policy_(load_pretrained(dir, std::nullopt, device)), processors_(load_policy_processors(dir)), device_(device) {
  if (const auto problems = normalizer_stat_problems(processors_.normalizer, policy_->config()); !problems.empty())
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
  return prepare_into(observation, nullptr);
}

Batch InferencePolicy::take_observation(const std::map<std::string, torch::Tensor>& observation) {
  return prepare_into(observation, &last_state_);
}

Batch InferencePolicy::prepare_into(const std::map<std::string, torch::Tensor>& observation, torch::Tensor* raw_state) const {
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
      if (!input_fits(cfg, feature, x.sizes().vec()))  // π/SmolVLA: a narrower state, zero-padded
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
  return observation_inputs(cfg, processors_, observation, {task_}, device_, convert, missing, raw_state);
}

torch::Tensor InferencePolicy::select_action(const std::map<std::string, torch::Tensor>& observation) {
  InferenceGuard guard;
  auto action = policy_->select_action(take_observation(observation));  // (1, A)
  return processors_.postprocess_action(action.to(torch::kCPU), last_state_).squeeze(0);
}

torch::Tensor InferencePolicy::predict_action_chunk(const std::map<std::string, torch::Tensor>& observation) {
  InferenceGuard guard;
  auto chunk = graphed_->predict(take_observation(observation));  // (1, chunk, A)
  return processors_.postprocess_action(chunk.to(torch::kCPU), last_state_).squeeze(0);
}

namespace {
RtcPolicy& rtc_policy(Policy& policy, const std::string& flag = "policy.rtc_config") {
  auto* rtc = dynamic_cast<RtcPolicy*>(&policy);
  if (!rtc)
    throw_usage("policy type '" + policy.config().type() + "' has no real-time chunking (SmolVLA has)", flag,
                "predict its chunks without a previous chunk's leftover");
  return *rtc;
}
}  // namespace

void InferencePolicy::set_rtc(std::optional<RtcSettings> settings) { rtc_policy(*policy_).set_rtc(std::move(settings)); }

void InferencePolicy::ensure_rtc(const std::string& flag) {
  RtcPolicy& rtc = rtc_policy(*policy_, flag);
  if (!rtc.rtc()) rtc.set_rtc(RtcSettings{});
}

torch::Tensor InferencePolicy::predict_action_chunk(const std::map<std::string, torch::Tensor>& observation,
                                                    const torch::Tensor& left_over, int64_t inference_delay,
                                                    std::optional<int64_t> execution_horizon) {
  InferenceGuard guard;
  RtcPolicy& rtc = rtc_policy(*policy_);
  if (inference_delay < 0)
    throw_usage("inference_delay must be >= 0, got " + std::to_string(inference_delay), "inference_delay");
  if (execution_horizon && *execution_horizon < 0)
    throw_usage("execution_horizon must be >= 0, got " + std::to_string(*execution_horizon), "execution_horizon");
  const Batch batch = take_observation(observation);
  RtcGuidance guidance;
  guidance.inference_delay = inference_delay;
  guidance.execution_horizon = execution_horizon;
  if (left_over.defined()) {
    if (left_over.dim() != 2)
      throw_usage("the previous chunk's leftover has shape " + c10::str(left_over.sizes()), "left_over",
                  "give (steps, action dims): the rows of the previous chunk not executed yet");
    // Back into the policy's output space (the postprocessor inverted: relative to the current
    // state, as LeRobot's reanchor_relative_rtc_prefix, then normalized).
    torch::Tensor prev = left_over.to(torch::kFloat32).unsqueeze(0);
    if (processors_.adds_state()) prev = processors_.relative_actions->to_relative(prev, last_state_);
    const Batch actions{{"action", prev.to(device_)}};
    guidance.prev_chunk_left_over = processors_.normalizer.normalize(actions).at("action");
  }
  auto chunk = rtc.predict_action_chunk_rtc(batch, guidance);  // (1, chunk, A)
  return processors_.postprocess_action(chunk.to(torch::kCPU), last_state_).squeeze(0);
}

void InferencePolicy::reset() { policy_->reset(); }

}  // namespace lerobot
