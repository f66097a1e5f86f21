// The policy pre/post-processor pipelines LeRobot saves next to model.safetensors:
// policy_preprocessor.json (rename, to_batch, device, normalizer; SmolVLA adds
// smolvla_new_line_processor and tokenizer_processor after to_batch, its tokenizer saved under
// tokenizer/) and policy_postprocessor.json (unnormalizer, device), each normalizer with its
// `<feature>.<stat>` safetensors state file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

inline constexpr const char* kPreprocessorName = "policy_preprocessor";
inline constexpr const char* kPostprocessorName = "policy_postprocessor";
inline constexpr const char* kNormalizerStateFile = "policy_preprocessor_step_3_normalizer_processor.safetensors";
inline constexpr const char* kUnnormalizerStateFile =
    "policy_postprocessor_step_0_unnormalizer_processor.safetensors";

class TextTokenizer;

// LeRobot's smolvla_new_line_processor + tokenizer_processor: each task gets a trailing newline,
// then the tokenizer makes observation.language.tokens (B, L) int64 and
// observation.language.attention_mask (B, L) bool.
struct LanguageProcessing {
  bool newline = true;
  int64_t max_length = 48;
  std::string padding = "longest";  // or "max_length"
  std::string padding_side = "right";
  bool truncation = true;
  std::string task_key = "task";
  fs::path tokenizer_dir;  // its files are saved to <checkpoint>/tokenizer
  std::shared_ptr<const TextTokenizer> tokenizer;
  // Adds the two tensors for `tasks` (one per batch row) to `batch`, on `device`.
  void tokenize(const std::vector<std::string>& tasks, Batch& batch, const torch::Device& device) const;
};

struct PolicyProcessors {
  // --rename_map {dataset key: policy key}, applied first to every key of a batch (observations,
  // the action, and their "_is_pad"/"_padding_mask" companions), as LeRobot 0.6's rename_batch_keys;
  // saved as the rename_observations_processor step so eval and infer rename the same keys.
  std::map<std::string, std::string> rename_map;
  std::string device = "cpu";                     // the preprocessor's device_processor device
  Normalizer normalizer;    // input + output features (preprocessor step 3)
  Normalizer unnormalizer;  // output features (postprocessor step 0)

  std::optional<LanguageProcessing> language;  // SmolVLA's task tokenization

  // Preprocessing of a batched observation/training batch: rename, tokenize the tasks (one per
  // row; a policy with language input refuses a batch without them), then normalize.
  Batch preprocess(const Batch& batch, const std::vector<std::string>& tasks = {}) const;
  // The normalizer's state file name (its step index differs with the language steps).
  std::string normalizer_state_file() const;
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
// apply_imagenet_stats() first when training with ImageNet stats). A config with language input
// gets the language steps, its tokenizer from the folder resolve_model_folder gives.
PolicyProcessors make_policy_processors(const PolicyConfig& config, const Stats& stats,
                                        const std::string& device = "cpu");

// Writes the two JSON files (indent 2) and the two state files into `dir`.
void save_policy_processors(const fs::path& dir, const PolicyProcessors& processors);
// Reads them back; a missing or malformed file throws a checkpoint error naming it.
PolicyProcessors load_policy_processors(const fs::path& dir);

}  // namespace lerobot
