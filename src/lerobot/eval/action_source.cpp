// ActionSource implementations: a trained policy + processors, the scripted expert, a constant.
#include "lerobot/eval/action_source.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/graphed_inference.h"
#include "lerobot/policies/observation_inputs.h"
#include "lerobot/policies/padded_inputs.h"

namespace lerobot {

PolicyActionSource::PolicyActionSource(Policy& policy, const PolicyProcessors& processors, bool cuda_graphs)
    : policy_(policy),
      processors_(processors),
      device_(policy.device()),
      was_training_(policy.is_training()),
      graphed_(std::make_unique<GraphedChunkPredictor>(policy, cuda_graphs)) {
  processors_.normalizer.to(device_);
  processors_.unnormalizer.to(torch::kCPU);
  policy_.eval();
  graphed_->serve_select_action();
}

PolicyActionSource::~PolicyActionSource() {
  graphed_.reset();  // gives select_action back its own chunks
  policy_.train(was_training_);
}

std::string PolicyActionSource::graphs_status() const {
  if (graphed_->replaying()) return "replaying";
  return graphed_->why_not().empty() ? "warming up" : graphed_->why_not();
}

void PolicyActionSource::reset(int64_t) { policy_.reset(); }

torch::Tensor PolicyActionSource::act(const RolloutObservation& obs) {
  const PolicyConfig& cfg = policy_.config();
  auto convert = [&](const std::string& name, const std::string& key, const PolicyFeature& feature,
                     const torch::Tensor& x) {
    const auto& shape = feature.shape;
    bool fits = x.dim() == static_cast<int64_t>(shape.size()) + 1;
    const bool any_size = feature.type == "VISUAL" && cfg.resizes_images();
    for (size_t d = 0; fits && !any_size && d < shape.size(); ++d) fits = x.size(d + 1) == shape[d];
    if (!fits && x.dim() == 2) fits = input_fits(cfg, feature, {x.size(1)});  // π/SmolVLA: a narrower state
    if (!fits)
      throw_usage("the env's '" + name + "' has shape " + c10::str(x.sizes().slice(1)) +
                      " but the policy expects " + c10::str(c10::IntArrayRef(shape)),
                  key,
                  feature.type == "VISUAL"
                      ? "pass --env.image_size=" + std::to_string(shape.back()) + " (the training resolution)"
                      : "evaluate in the task the policy was trained on");
    return x;
  };
  auto missing = [](const std::string& key) {
    throw_usage("the env gives no '" + key + "' observation", key,
                "evaluate in the task the policy was trained on (or set a rename_map)");
  };
  // With relative actions, the action (a chunk's queued step too) is made absolute with this
  // step's state, as LeRobot's rollout does (its postprocessor adds the last preprocessed state).
  torch::Tensor state;
  const Batch batch = observation_inputs(cfg, processors_, obs.batch, obs.tasks, device_, convert, missing, &state);
  torch::NoGradGuard no_grad;
  torch::Tensor action = policy_.select_action(batch);  // (B, A)
  return processors_.postprocess_action(action.to(torch::kCPU).to(torch::kFloat32), state);
}

void ExpertActionSource::reset(int64_t) { experts_.clear(); }

torch::Tensor ExpertActionSource::act(const RolloutObservation& obs) {
  LEROBOT_CHECK(obs.env != nullptr, "ExpertActionSource needs the simulator");
  if (experts_.size() != static_cast<size_t>(obs.env->num_envs())) experts_ = make_experts(*obs.env);
  expert_actions(*obs.env, experts_, actions_);
  const int64_t n = obs.env->num_envs();
  return torch::from_blob(actions_.data(), {n, obs.env->spec().action_dim}, torch::kFloat32).clone();
}

torch::Tensor ConstantActionSource::act(const RolloutObservation& obs) {
  int64_t n = 0;
  if (obs.env) n = obs.env->num_envs();
  else if (!obs.batch.empty()) n = obs.batch.begin()->second.size(0);
  auto row = torch::tensor(action_, torch::kFloat32).unsqueeze(0);
  return row.expand({n, row.size(1)}).contiguous();
}

}  // namespace lerobot
