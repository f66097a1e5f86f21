// Normalizer: LeRobot's normalizer_processor / unnormalizer_processor math and state
// (processor/normalize_processor.py). Mode chosen by feature type through norm_map.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

// feature key -> stat name ("mean", "std", "min", "max", "q01", ...) -> tensor.
using Stats = std::map<std::string, std::map<std::string, torch::Tensor>>;

// ImageNet mean/std as (3, 1, 1) float32, the values LeRobot trains cameras with by default.
torch::Tensor imagenet_mean();
torch::Tensor imagenet_std();
// Replaces mean/std of each camera key with the ImageNet values (LeRobot's use_imagenet_stats).
void apply_imagenet_stats(Stats& stats, const std::vector<std::string>& camera_keys);

class Normalizer {
 public:
  Normalizer() = default;
  // features: the features this step handles, in order (key, feature); norm_map: type -> mode
  // (MEAN_STD, MIN_MAX, QUANTILES, QUANTILE10, IDENTITY; a missing type means IDENTITY).
  Normalizer(std::vector<std::pair<std::string, PolicyFeature>> features,
             std::map<std::string, std::string> norm_map, const Stats& stats, double eps = 1e-8);

  // Observations: every non-ACTION feature present in `batch`; actions: "action" when present.
  Batch normalize(const Batch& batch) const;
  Batch unnormalize(const Batch& batch) const;
  // One tensor of a feature of type `type`; keys without stats or IDENTITY pass through.
  torch::Tensor apply(const torch::Tensor& x, const std::string& key, const std::string& type, bool inverse) const;

  // Flat "<feature>.<stat>" float32 CPU tensors for every stat held (the state file content).
  TensorMap state_dict() const;
  // Replaces the stats by those in a flat state (split at the last dot); `source` names the file.
  void load_state_dict(const TensorMap& state, const std::string& source);
  // Moves stats to a device (normalize() also adapts to the input's device).
  void to(const torch::Device& device);

  const std::vector<std::pair<std::string, PolicyFeature>>& features() const { return features_; }
  const std::map<std::string, std::string>& norm_map() const { return norm_map_; }
  const Stats& stats() const { return stats_; }
  double eps() const { return eps_; }

 private:
  void reshape_visual_stats();
  std::vector<std::pair<std::string, PolicyFeature>> features_;
  std::map<std::string, std::string> norm_map_;
  Stats stats_;
  double eps_ = 1e-8;
};

// What keeps `n` from normalizing every feature it handles: a feature whose mode is not IDENTITY
// with no stats, a stat that mode needs missing, or a stat whose shape does not broadcast to the
// feature's shape (a 1-D state/action stat may have any width the policy `cfg` takes: see
// padded_inputs.h). Each entry names the feature (and stat). Empty: usable.
std::vector<std::string> normalizer_stat_problems(const Normalizer& n, const PolicyConfig& cfg);

}  // namespace lerobot
