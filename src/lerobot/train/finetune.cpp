// Fine-tuning start (see finetune.h).
#include "lerobot/train/finetune.h"

#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/train/policy_features.h"

namespace lerobot {
namespace {

// Config keys a fine-tuning run may change: they leave every weight's name and shape alone.
// Features are checked on their own (they come from the dataset); everything else (dims, layer
// counts, chunk_size, use_vae, backbone, ...) shapes the network and must match the checkpoint.
const std::set<std::string>& overridable_keys() {
  static const std::set<std::string> keys = {
      "type", "device", "use_amp", "push_to_hub", "repo_id", "private", "tags", "license", "pretrained_path",
      "pretrained_revision", "input_features", "output_features", "normalization_mapping",
      "pretrained_backbone_weights", "n_action_steps", "temporal_ensemble_coeff", "dropout", "kl_weight",
      "optimizer_lr", "optimizer_weight_decay", "optimizer_lr_backbone", "optimizer_betas", "optimizer_eps",
      "scheduler_warmup_steps", "scheduler_decay_steps", "scheduler_decay_lr", "use_peft",
      // What is trained and how, not the network (LeRobot: --policy.path=lerobot/pi05_base
      // --policy.freeze_vision_encoder=true ...); a dtype other than the checkpoint's converts on load.
      "freeze_vision_encoder", "train_expert_only", "gradient_checkpointing", "compile_model", "compile_mode",
      "optimizer_grad_clip_norm", "dtype"};
  return keys;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

void check_architecture(const PolicyConfig& run, PolicyConfig& checkpoint, const fs::path& dir) {
  const Json want = to_json(const_cast<PolicyConfig&>(run));
  const Json have = to_json(checkpoint);
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (overridable_keys().count(it.key()) || run.fine_tuning_may_change(it.key()) || !have.contains(it.key())) continue;
    if (have[it.key()] != it.value())
      throw_usage("--policy." + it.key() + "=" + it.value().dump() + " changes the network of the checkpoint being "
                      "fine-tuned (" + (dir / kConfigFile).string() + " has " + have[it.key()].dump() + ")",
                  "--policy." + it.key(),
                  "drop --policy." + it.key() + " to fine-tune, or train from scratch with --policy.type=" +
                      run.type());
  }
}

// The policy reads config.input_features (the checkpoint's): the dataset must provide each with
// the same shape, and its action must have the checkpoint's action shape.
void check_features(const PolicyConfig& run, const PolicyConfig& checkpoint, const DatasetMetadata& meta,
                    const std::map<std::string, std::string>& rename_map, const fs::path& dir) {
  std::map<std::string, PolicyFeature> have;
  for (const auto& [key, f] : dataset_to_policy_features(meta, rename_map)) have[key] = f;
  const std::string info = (meta.root / "meta/info.json").string();
  for (const auto& [key, f] : run.input_features) {
    if (run.is_placeholder_feature(key)) continue;  // SmolVLA's empty camera slots
    auto it = have.find(key);
    if (it == have.end())
      throw_data("the dataset has no '" + key + "', an input of the checkpoint being fine-tuned (" +
                     (dir / kConfigFile).string() + ")",
                 info, "fine-tune on a dataset with the same cameras and state, or map a key with --rename_map");
    if (it->second.shape != f.shape && !(f.type == "VISUAL" && run.resizes_images()))
      throw_data("'" + key + "' has shape " + shape_str(it->second.shape) + " in the dataset but " +
                     shape_str(f.shape) + " in the checkpoint being fine-tuned",
                 info, "fine-tune on data with the checkpoint's shapes (image size, state size)");
  }
  for (const auto& [key, f] : checkpoint.output_features) {
    auto it = run.output_features.find(key);
    if (it == run.output_features.end() || it->second.shape != f.shape)
      throw_data("the dataset's '" + key + "' " +
                     (it == run.output_features.end() ? std::string("is missing") : "has shape " + shape_str(it->second.shape)) +
                     " but the checkpoint being fine-tuned predicts " + shape_str(f.shape),
                 info, "fine-tune on a dataset with the checkpoint's action space");
  }
}

}  // namespace

PolicyPtr load_finetune_policy(const PolicyConfig& config, const DatasetMetadata& meta,
                               const std::map<std::string, std::string>& rename_map, const torch::Device& device) {
  LEROBOT_CHECK(config.pretrained_path.has_value(), "fine-tuning without policy.pretrained_path");
  const fs::path dir = *config.pretrained_path;
  if (!fs::is_directory(dir))
    throw_checkpoint("the policy to fine-tune is not a directory", dir.string(),
                     "pass --policy.path=<output_dir>/checkpoints/<step>/pretrained_model");
  std::unique_ptr<PolicyConfig> checkpoint = load_policy_config(dir / kConfigFile, config.type());
  check_architecture(config, *checkpoint, dir);
  check_features(config, *checkpoint, meta, rename_map, dir);
  PolicyPtr policy = load_pretrained_weights(config, dir, device);  // strict; damaged file: checkpoint error
  // --policy.pretrained_revision picked this snapshot (apps/lerobot-cpp/hub_flags.cpp) when the
  // policy came from the Hub; the log says which revision it was.
  LOG_INFO << "Fine-tuning from " << dir.string()
           << (config.pretrained_revision ? " (Hub revision " + *config.pretrained_revision + ")" : std::string())
           << " (weights loaded strictly; normalization stats from the new dataset)";
  return policy;
}

}  // namespace lerobot
