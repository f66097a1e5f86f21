// The policy pre/post-processor pipelines LeRobot saves next to model.safetensors:
// policy_preprocessor.json (rename, to_batch, device, normalizer) and policy_postprocessor.json
// (unnormalizer, device), each normalizer with its `<feature>.<stat>` safetensors state file.
#pragma once

#include <map>
#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

inline constexpr const char* kPreprocessorName = "policy_preprocessor";
inline constexpr const char* kPostprocessorName = "policy_postprocessor";
inline constexpr const char* kNormalizerStateFile = "policy_preprocessor_step_3_normalizer_processor.safetensors";
inline constexpr const char* kUnnormalizerStateFile =
    "policy_postprocessor_step_0_unnormalizer_processor.safetensors";

struct PolicyProcessors {
  // --rename_map {dataset key: policy key}, applied first to every key of a batch (observations,
  // the action, and their "_is_pad"/"_padding_mask" companions), as LeRobot 0.6's rename_batch_keys;
  // saved as the rename_observations_processor step so eval and infer rename the same keys.
  std::map<std::string, std::string> rename_map;
  std::string device = "cpu";                     // the preprocessor's device_processor device
  Normalizer normalizer;    // input + output features (preprocessor step 3)
  Normalizer unnormalizer;  // output features (postprocessor step 0)

  // Preprocessing of a batched observation/training batch: rename, then normalize.
  Batch preprocess(const Batch& batch) const;
  // (…, A) normalized action -> robot units.
  torch::Tensor postprocess_action(const torch::Tensor& action) const;
};

// LeRobot's _rename_key_with_metadata: `key` renamed by the map, or "<base>_is_pad" /
// "<base>_padding_mask" of a renamed base; other keys unchanged.
std::string rename_feature_key(const std::string& key, const std::map<std::string, std::string>& rename_map);
// LeRobot's rename_stats: the top-level keys renamed.
Stats rename_stats(const Stats& stats, const std::map<std::string, std::string>& rename_map);

// LeRobot's make_default_pre_post_processors: features = input (dataset order) + output features,
// norm_map = config.normalization_mapping(), stats = the dataset stats (whole dict; apply
// apply_imagenet_stats() first when training with ImageNet stats).
PolicyProcessors make_policy_processors(const PolicyConfig& config, const Stats& stats,
                                        const std::string& device = "cpu");

// Writes the two JSON files (indent 2) and the two state files into `dir`.
void save_policy_processors(const fs::path& dir, const PolicyProcessors& processors);
// Reads them back; a missing or malformed file throws a checkpoint error naming it.
PolicyProcessors load_policy_processors(const fs::path& dir);

}  // namespace lerobot
