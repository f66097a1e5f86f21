// PolicyConfig: the base of every policy config (LeRobot's PreTrainedConfig), the policy feature
// description stored in config.json, and the registry that `--policy.type` chooses from.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/config.h"
#include "lerobot/optim/training_preset.h"

namespace lerobot {

// LeRobot's FeatureType values, stored as strings in config.json.
struct PolicyFeature {
  std::string type;             // "VISUAL", "STATE", "ENV", "ACTION"
  std::vector<int64_t> shape;   // images in (C, H, W)
  bool operator==(const PolicyFeature& o) const { return type == o.type && shape == o.shape; }
};
void to_json(Json& j, const PolicyFeature& f);
void from_json(const Json& j, PolicyFeature& f);

// A policy that reads the task in words (SmolVLA): its preprocessor appends a newline to each
// task and tokenizes it (LeRobot's smolvla_new_line_processor and tokenizer_processor steps).
struct LanguageInput {
  std::string tokenizer_name;  // a Hub id or folder with tokenizer.json
  int64_t max_length = 48;
  std::string padding = "longest";  // or "max_length"
  bool newline = true;
};

class PolicyConfig : public ChoiceConfig {
 public:
  int64_t n_obs_steps = 1;
  std::map<std::string, PolicyFeature> input_features;
  std::map<std::string, PolicyFeature> output_features;
  std::optional<std::string> device;
  bool use_amp = false;
  bool use_peft = false;
  bool push_to_hub = false;  // LeRobot defaults to true; nothing is pushed from here
  std::optional<std::string> repo_id;
  std::optional<bool> private_;  // LeRobot: bool | None = None (its config.json says null)
  std::optional<std::vector<std::string>> tags;
  std::optional<std::string> license;
  std::optional<std::string> pretrained_path;
  std::optional<std::string> pretrained_revision;

  // Not a config.json field: the order of input_features in the dataset (LeRobot keeps dict
  // order, which decides the camera token order of ACT and the key order written to
  // config.json). input_features is a std::map (sorted), so whoever fills input_features from a
  // dataset also fills this; load_policy_config() fills it from config.json's key order. Empty:
  // sorted order. ChoicePtr copies carry it over (copy_non_fields).
  std::vector<std::string> input_feature_order;
  void copy_non_fields(const Config& other) override {
    if (const auto* p = dynamic_cast<const PolicyConfig*>(&other)) input_feature_order = p->input_feature_order;
  }

  // input_features keys in dataset order (input_feature_order first, then any others sorted).
  std::vector<std::string> ordered_input_keys() const;
  // Keys of VISUAL input features in that order (LeRobot's config.image_features).
  std::vector<std::string> image_feature_keys() const;

  // Declares the base fields; subclasses call this first from their visit().
  void visit_base(FieldVisitor& v);

  // Delta indices for the sampler (nullopt: no history/future for that key group).
  virtual std::optional<std::vector<int64_t>> observation_delta_indices() const { return std::nullopt; }
  virtual std::optional<std::vector<int64_t>> action_delta_indices() const { return std::nullopt; }
  // LeRobot's per-modality history (π0.5's MEM): when set, the cameras (observation.image*) /
  // observation.state take these instead of observation_delta_indices.
  virtual std::optional<std::vector<int64_t>> image_observation_delta_indices() const { return std::nullopt; }
  virtual std::optional<std::vector<int64_t>> state_observation_delta_indices() const { return std::nullopt; }
  virtual int64_t drop_n_last_frames() const { return 0; }
  // LeRobot's get_optimizer_preset/get_scheduler_preset (--use_policy_training_preset); nullopt:
  // the policy has none, --optimizer.type must be given.
  virtual std::optional<TrainingPreset> training_preset() const { return std::nullopt; }
  // A warning when a run of `steps` steps cannot train this policy as its settings mean (VQ-BeT:
  // the run ends before its VQ-VAE phase does); nullopt when it can.
  virtual std::optional<std::string> training_length_warning(int64_t steps) const { return std::nullopt; }
  // How the task text reaches the policy, or nullopt when it does not.
  virtual std::optional<LanguageInput> language_input() const { return std::nullopt; }
  // Input features the dataset does not provide (SmolVLA's empty camera slots).
  virtual bool is_placeholder_feature(const std::string& key) const { return false; }
  // Whether fine-tuning may give config key `key` another value than the checkpoint's without
  // touching a weight's name or shape (beyond the keys every policy shares; see train/finetune.cpp).
  virtual bool fine_tuning_may_change(const std::string& key) const { return false; }
  // The policy resizes every camera itself (SmolVLA), so a camera of another size fits it.
  virtual bool resizes_images() const { return false; }
  // Normalization mode per feature type ("VISUAL" -> "MEAN_STD").
  virtual std::map<std::string, std::string> normalization_mapping() const = 0;
};

using PolicyRegistry = Registry<PolicyConfig>;

struct Flag;
// LeRobot's --policy.path=DIR: removes the flag from `flags` and loads DIR/config.json into
// `policy` (type included) with pretrained_path = DIR. Refuses it together with --policy.type.
// Returns false when the flag is absent.
bool take_policy_path_flag(std::vector<Flag>& flags, ChoicePtr<PolicyConfig>& policy);

}  // namespace lerobot
