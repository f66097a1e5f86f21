// Fine-tuning start (see finetune.h).
#include "lerobot/train/finetune.h"

#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/policies/padded_inputs.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/smolvla/configuration_smolvla.h"
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

// The policy reads config.input_features (the checkpoint's: LeRobot's make_policy keeps a
// pretrained config's inputs and takes only the outputs from the dataset): the dataset must
// provide each with a shape the weights take, and its action must fit the checkpoint's head.
void check_features(const PolicyConfig& run, const PolicyConfig& checkpoint, const DatasetMetadata& meta,
                    const std::map<std::string, std::string>& rename_map, const fs::path& dir) {
  std::map<std::string, PolicyFeature> have;
  std::vector<std::string> dataset_cameras;
  for (const auto& [key, f] : dataset_to_policy_features(meta, rename_map)) {
    have[key] = f;
    if (f.type == "VISUAL") dataset_cameras.push_back(key);
  }
  const std::string info = (meta.root / "meta/info.json").string();
  std::vector<std::string> cameras, absent;
  for (const auto& [key, f] : run.input_features) {
    if (run.is_placeholder_feature(key)) continue;  // empty camera slots (--policy.empty_cameras)
    auto it = have.find(key);
    if (it == have.end() && f.type == "VISUAL" && fills_absent_cameras(run)) {
      absent.push_back(key);
      continue;
    }
    if (f.type == "VISUAL") cameras.push_back(key);
    if (it == have.end())
      throw_data("the dataset has no '" + key + "', an input of the checkpoint being fine-tuned (" +
                     (dir / kConfigFile).string() + ")",
                 info, "fine-tune on a dataset with the same cameras and state, or map a key with --rename_map");
    if (!input_fits(run, f, it->second.shape))
      throw_data("'" + key + "' has shape " + shape_str(it->second.shape) + " in the dataset but " +
                     shape_str(f.shape) + " in the checkpoint being fine-tuned",
                 info, "fine-tune on data with the checkpoint's shapes (image size, state size)");
  }
  if (!absent.empty() && cameras.empty()) {
    const std::string example = dataset_cameras.empty() ? std::string("observation.images.<camera>") : dataset_cameras[0];
    throw_data("none of the cameras of the checkpoint being fine-tuned (" + join(absent, ", ") + ", in " +
                   (dir / kConfigFile).string() + ") is in the dataset (its cameras: " +
                   (dataset_cameras.empty() ? std::string("none") : join(dataset_cameras, ", ")) +
                   "); LeRobot refuses it too (\"All image features are missing from the batch\")",
               info, "map a dataset camera onto one of the checkpoint's with --rename_map='{\"" + example + "\": \"" +
                         absent[0] + "\"}' (the others are then filled with empty images)");
  }
  if (!absent.empty()) {
    const auto* smol = dynamic_cast<const SmolVLAConfig*>(&run);
    LOG_WARNING << "The dataset has " << join(cameras, ", ") << " of the checkpoint's cameras but not "
                << join(absent, ", ") << ": "
                << (smol ? "up to --policy.empty_cameras (" + std::to_string(smol->empty_cameras) +
                               ") absent cameras, its empty slots included, are filled with -1 images masked out, "
                               "the rest left out (LeRobot's SmolVLA)"
                         : std::string("each is filled with a -1 image masked out (LeRobot's π)"))
                << "; map a dataset camera onto one with --rename_map";
  }
  for (const auto& [key, f] : checkpoint.output_features) {
    auto it = run.output_features.find(key);
    if (it == run.output_features.end() || !input_fits(run, f, it->second.shape))
      throw_data("the dataset's '" + key + "' " +
                     (it == run.output_features.end() ? std::string("is missing") : "has shape " + shape_str(it->second.shape)) +
                     " but the checkpoint being fine-tuned predicts " + shape_str(f.shape) +
                     (widest_vector(run, f.type) ? " (actions zero-padded to its max_action_dim)" : ""),
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
