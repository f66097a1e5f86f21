// The policy pre/post-processor pipelines LeRobot saves next to model.safetensors:
// policy_preprocessor.json and policy_postprocessor.json, each normalizer with its
// `<feature>.<stat>` safetensors state file named after its step index, the tokenizer (when
// there is one) saved under tokenizer/. The layouts, in LeRobot 0.6.2's step order:
//   default:  rename, to_batch, device, normalizer (step 3)            | unnormalizer, device
//   SmolVLA:  rename, to_batch, smolvla_new_line, tokenizer, device,
//             normalizer (step 5)                                      | unnormalizer, device
//   π0:       rename, to_batch, pi0_new_line, tokenizer, device,
//             relative_actions, normalizer (step 6)                    | unnormalizer, absolute_actions, device
//   π0.5:     rename, to_batch, relative_actions, normalizer (step 3),
//             pi05_prepare_state_tokenizer, tokenizer, device          | unnormalizer, absolute_actions, device
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/policy_config.h"
#include "lerobot/policies/relative_actions.h"

namespace lerobot {

inline constexpr const char* kPreprocessorName = "policy_preprocessor";
inline constexpr const char* kPostprocessorName = "policy_postprocessor";
inline constexpr const char* kNormalizerStateFile = "policy_preprocessor_step_3_normalizer_processor.safetensors";
inline constexpr const char* kUnnormalizerStateFile =
    "policy_postprocessor_step_0_unnormalizer_processor.safetensors";

class TextTokenizer;

// The registry names of the steps that turn the tasks into the tokenizer's prompts.
inline constexpr const char* kSmolVLANewLineStep = "smolvla_new_line_processor";
inline constexpr const char* kPi0NewLineStep = "pi0_new_line_processor";
inline constexpr const char* kPi05PromptStep = "pi05_prepare_state_tokenizer_processor_step";

// LeRobot's prompt step + tokenizer_processor: the tasks become prompts (SmolVLA's and π0's
// newline steps append a trailing newline; π0.5's step builds "Task: …, State: <bins>;\nAction: "
// from the NORMALIZED observation.state, so it runs after the normalizer), then the tokenizer
// makes observation.language.tokens (B, L) int64 and observation.language.attention_mask (B, L) bool.
struct LanguageProcessing {
  // kSmolVLANewLineStep, kPi0NewLineStep, kPi05PromptStep, or "" (the tasks as they are).
  std::string prompt_step = kSmolVLANewLineStep;
  bool newline = true;        // the two newline steps
  bool include_state = true;  // π0.5: the state bins in the prompt (not use_proprioceptive_memory;
                              // LeRobot saves no config for the step, so a loaded one says true)
  int64_t max_length = 48;
  std::string padding = "longest";  // or "max_length"
  std::string padding_side = "right";
  bool truncation = true;
  std::string task_key = "task";
  fs::path tokenizer_dir;  // its files are saved to <checkpoint>/tokenizer
  std::shared_ptr<const TextTokenizer> tokenizer;
  // π0.5's prompt reads the normalized state: the normalizer runs before the tokenizer.
  bool after_normalizer() const { return prompt_step == kPi05PromptStep; }
  // The prompts of `tasks` (one per batch row); π0.5's read batch["observation.state"].
  std::vector<std::string> prompts(const std::vector<std::string>& tasks, const Batch& batch) const;
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

  std::optional<LanguageProcessing> language;  // SmolVLA's, π0's and π0.5's task tokenization
  // π0 / π0.5: relative_actions_processor before the normalizer, absolute_actions_processor after
  // the unnormalizer (relative_actions.h); absent for the other policies.
  std::optional<RelativeActions> relative_actions;

  // Preprocessing of a batched observation/training batch: rename, then tokenize the tasks (one
  // per row; a policy with language input refuses a batch without them) and normalize, in the
  // pipeline's order (π0.5 normalizes first); with relative actions on, the batch's action is made
  // relative to its observation.state first. A batch that already has the tokens is only
  // made relative and normalized.
  Batch preprocess(const Batch& batch, const std::vector<std::string>& tasks = {}) const;
  // The relative actions step, the language steps and the normalizer, in the pipeline's order, on
  // a renamed batch; the tokens go to `device`.
  Batch tokenize_and_normalize(Batch batch, const std::vector<std::string>& tasks, const torch::Device& device) const;
  // The preprocessor's step registry names, in order (see the layouts above).
  std::vector<std::string> preprocessor_steps() const;
  // The normalizer's state file name (its step index differs with the language steps).
  std::string normalizer_state_file() const;
  // Normalized action (B, A) or (B, T, A) -> robot units: unnormalized, then, with relative actions
  // on, `state` added on the masked dimensions. `state`: the raw (renamed, not normalized)
  // observation.state (B, S) of the last observation preprocessed, LeRobot's cached state; the
  // caller keeps it (observation_inputs hands it out). Unused, and may be undefined, when relative
  // actions are off; refused as undefined when they are on.
  torch::Tensor postprocess_action(const torch::Tensor& action, const torch::Tensor& state = {}) const;
  // Whether postprocess_action needs the state (relative actions on).
  bool adds_state() const { return relative_actions && relative_actions->enabled; }
};

// LeRobot's _rename_key_with_metadata: `key` renamed by the map, or "<base>_is_pad" /
// "<base>_padding_mask" of a renamed base; other keys unchanged.
std::string rename_feature_key(const std::string& key, const std::map<std::string, std::string>& rename_map);
// LeRobot's rename_stats: the top-level keys renamed.
Stats rename_stats(const Stats& stats, const std::map<std::string, std::string>& rename_map);

// LeRobot's make_default_pre_post_processors: features = input (dataset order) + output features,
// norm_map = config.normalization_mapping(), stats = the dataset stats (whole dict; apply
// apply_imagenet_stats() first when training with ImageNet stats). A config with language input
// gets the language steps, its tokenizer from the folder resolve_model_folder gives; a π0/π0.5
// config (type "pi0"/"pi05") gets its prompt step and the relative/absolute actions steps (on with
// use_relative_actions, masked by relative_exclude_joints and action_feature_names).
PolicyProcessors make_policy_processors(const PolicyConfig& config, const Stats& stats,
                                        const std::string& device = "cpu");

// Writes the two JSON files (indent 2) and the two state files into `dir`.
void save_policy_processors(const fs::path& dir, const PolicyProcessors& processors);
// Reads them back; a missing or malformed file throws a checkpoint error naming it.
PolicyProcessors load_policy_processors(const fs::path& dir);

}  // namespace lerobot
