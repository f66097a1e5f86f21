// VQBeTConfig field declarations and checks (LeRobot's __post_init__ / validate_features).
#include "lerobot/policies/vqbet/configuration_vqbet.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/config_checks.h"
#include "lerobot/policies/resnet_arch.h"

namespace lerobot {

void VQBeTConfig::visit(FieldVisitor& v) {
  visit_base(v);
  field(v, "n_action_pred_token", n_action_pred_token, "Current and future action tokens VQ-BeT predicts");
  field(v, "action_chunk_size", action_chunk_size, "Actions per predicted token (and executed per policy call)");
  field(v, "normalization_mapping", normalization_mapping_, "Normalization mode per feature type: MEAN_STD, MIN_MAX or IDENTITY");
  field(v, "vision_backbone", vision_backbone, "torchvision ResNet for the camera: resnet18, resnet34, resnet50, resnet101 or resnet152");
  field(v, "crop_shape", crop_shape, "(H, W) crop (random in training, centre in eval); null: no crop");
  field(v, "crop_is_random", crop_is_random, "Random crop in training (centre crop in eval always)");
  field(v, "pretrained_backbone_weights", pretrained_backbone_weights,
        "ImageNet weights by torchvision name (fetched once from the Hub as timm/<model>.tv_in1k), or a local "
        "safetensors file with torchvision keys; null: random init");
  field(v, "use_group_norm", use_group_norm, "GroupNorm (C/16 groups) instead of BatchNorm in the backbone");
  field(v, "spatial_softmax_num_keypoints", spatial_softmax_num_keypoints, "Keypoints of the spatial softmax");
  field(v, "n_vqvae_training_steps", n_vqvae_training_steps,
        "Training steps of phase 1 (the residual VQ-VAE that discretizes action chunks); then the GPT trains");
  field(v, "vqvae_n_embed", vqvae_n_embed, "Codes per residual-VQ layer");
  field(v, "vqvae_embedding_dim", vqvae_embedding_dim, "Size of each code vector");
  field(v, "vqvae_enc_hidden_dim", vqvae_enc_hidden_dim, "Hidden size of the VQ-VAE encoder and decoder");
  field(v, "gpt_block_size", gpt_block_size, "Longest token sequence of the GPT (>= the tokens it is given)");
  field(v, "gpt_input_dim", gpt_input_dim, "Size of the GPT's input tokens (observation features are projected to it)");
  field(v, "gpt_output_dim", gpt_output_dim, "Size of the GPT's output (input of the code and offset heads)");
  field(v, "gpt_n_layer", gpt_n_layer, "GPT layers");
  field(v, "gpt_n_head", gpt_n_head, "GPT attention heads");
  field(v, "gpt_hidden_dim", gpt_hidden_dim, "GPT hidden size");
  field(v, "dropout", dropout, "Dropout in the GPT");
  field(v, "offset_loss_weight", offset_loss_weight, "Weight of the offset (L1) loss");
  field(v, "primary_code_loss_weight", primary_code_loss_weight, "Weight of the primary code's focal loss");
  field(v, "secondary_code_loss_weight", secondary_code_loss_weight, "Weight of the secondary code's focal loss");
  field(v, "bet_softmax_temperature", bet_softmax_temperature, "Temperature of the code sampling");
  field(v, "sequentially_select", sequentially_select, "Sample the primary code, then the secondary given it");
  field(v, "optimizer_lr", optimizer_lr, "Preset learning rate");
  field(v, "optimizer_betas", optimizer_betas, "Preset Adam betas");
  field(v, "optimizer_eps", optimizer_eps, "Preset Adam eps");
  field(v, "optimizer_weight_decay", optimizer_weight_decay, "Preset weight decay (L2, Adam)");
  field(v, "optimizer_vqvae_lr", optimizer_vqvae_lr, "Preset learning rate of the VQ-VAE encoder and decoder");
  field(v, "optimizer_vqvae_weight_decay", optimizer_vqvae_weight_decay, "Preset weight decay of the VQ-VAE");
  field(v, "scheduler_warmup_steps", scheduler_warmup_steps, "Preset warm-up steps (after phase 1)");
}

void VQBeTConfig::validate() const {
  check_resnet_arch(vision_backbone, "policy.vision_backbone");
  check_positive_policy_fields({
      {"n_obs_steps", n_obs_steps},
      {"n_action_pred_token", n_action_pred_token},
      {"action_chunk_size", action_chunk_size},
      {"spatial_softmax_num_keypoints", spatial_softmax_num_keypoints},
      {"vqvae_n_embed", vqvae_n_embed},
      {"vqvae_embedding_dim", vqvae_embedding_dim},
      {"vqvae_enc_hidden_dim", vqvae_enc_hidden_dim},
      {"gpt_block_size", gpt_block_size},
      {"gpt_input_dim", gpt_input_dim},
      {"gpt_output_dim", gpt_output_dim},
      {"gpt_n_layer", gpt_n_layer},
      {"gpt_n_head", gpt_n_head},
      {"gpt_hidden_dim", gpt_hidden_dim}});
  if (n_vqvae_training_steps < 0) throw_usage("n_vqvae_training_steps must be >= 0", "policy.n_vqvae_training_steps");
  if (gpt_hidden_dim % gpt_n_head != 0)
    throw_usage("gpt_hidden_dim (" + std::to_string(gpt_hidden_dim) + ") must be a multiple of gpt_n_head (" +
                    std::to_string(gpt_n_head) + ")",
                "policy.gpt_hidden_dim");
  if (crop_shape && (crop_shape->size() != 2 || (*crop_shape)[0] <= 0 || (*crop_shape)[1] <= 0))
    throw_usage("crop_shape must be a pair of positive integers", "policy.crop_shape",
                "pass --policy.crop_shape=\"[H, W]\" or null");
  if (!(bet_softmax_temperature > 0.0))
    throw_usage("bet_softmax_temperature must be > 0", "policy.bet_softmax_temperature");
  if (use_group_norm && pretrained_backbone_weights)
    throw_usage("use_group_norm cannot be used with pretrained_backbone_weights (they are batch-norm weights)",
                "policy.use_group_norm", "pass --policy.pretrained_backbone_weights=null or --policy.use_group_norm=false");
  if (optimizer_betas.size() != 2) throw_usage("optimizer_betas must have 2 values", "policy.optimizer_betas");
  if (input_features.empty()) return;  // features not known yet (filled from the dataset later)

  const auto cams = image_feature_keys();
  if (cams.size() != 1)
    throw_usage("VQ-BeT takes exactly one camera; the inputs have " + std::to_string(cams.size()), "policy.input_features",
                "keep one camera (e.g. --rename_map, or a dataset with one camera)");
  if (crop_shape) {
    const auto& s = input_features.at(cams.front()).shape;
    if (s.size() == 3 && ((*crop_shape)[0] > s[1] || (*crop_shape)[1] > s[2]))
      throw_usage("crop_shape [" + std::to_string((*crop_shape)[0]) + ", " + std::to_string((*crop_shape)[1]) +
                      "] does not fit '" + cams.front() + "' (" + std::to_string(s[1]) + "x" + std::to_string(s[2]) + ")",
                  "policy.crop_shape", "pass a smaller --policy.crop_shape or null");
  }
  auto state = input_features.find("observation.state");
  if (state == input_features.end() || state->second.shape.size() != 1)
    throw_usage("VQ-BeT needs a 1-D 'observation.state' among the inputs", "policy.input_features",
                "train on a dataset with an observation.state feature");
  // LeRobot places the action-query outputs at stride len(input_features) + 1: with any input
  // besides the camera and the state it would read the wrong tokens.
  if (input_features.size() != 2)
    throw_usage("VQ-BeT takes one camera and observation.state; the inputs also have other features",
                "policy.input_features", "drop the other features (e.g. observation.environment_state)");
  auto action = output_features.find("action");
  if (action == output_features.end() || action->second.shape.size() != 1)
    throw_usage("VQ-BeT needs a 1-D 'action' output feature", "policy.output_features");
  if (gpt_tokens() > gpt_block_size)
    throw_usage("the GPT gets " + std::to_string(gpt_tokens()) + " tokens, more than gpt_block_size=" +
                    std::to_string(gpt_block_size),
                "policy.gpt_block_size", "raise --policy.gpt_block_size or lower --policy.n_obs_steps");
}

std::optional<std::string> VQBeTConfig::training_length_warning(int64_t steps) const {
  if (steps > n_vqvae_training_steps) return std::nullopt;
  return "--steps (" + std::to_string(steps) + ") ends inside VQ-BeT's VQ-VAE phase (--policy.n_vqvae_training_steps=" +
         std::to_string(n_vqvae_training_steps) +
         "): the GPT never trains, so the policy cannot act. LeRobot's 20000 goes with --steps=250000 on "
         "PushT; lower --policy.n_vqvae_training_steps or raise --steps.";
}

int64_t VQBeTConfig::gpt_tokens() const {
  const auto cams = static_cast<int64_t>(image_feature_keys().size());
  return n_obs_steps * (cams + 2) + n_action_pred_token - 1;
}

std::optional<std::vector<int64_t>> VQBeTConfig::observation_delta_indices() const {
  std::vector<int64_t> d;
  for (int64_t i = 1 - n_obs_steps; i <= 0; ++i) d.push_back(i);
  return d;
}

std::optional<std::vector<int64_t>> VQBeTConfig::action_delta_indices() const {
  std::vector<int64_t> d;
  for (int64_t i = 1 - n_obs_steps; i < n_action_pred_token + action_chunk_size - 1; ++i) d.push_back(i);
  return d;
}

std::optional<TrainingPreset> VQBeTConfig::training_preset() const {
  TrainingPreset p;
  p.optimizer.type = "adam";
  p.optimizer.lr = optimizer_lr;
  p.optimizer.betas = optimizer_betas;
  p.optimizer.eps = optimizer_eps;
  p.optimizer.weight_decay = optimizer_weight_decay;
  p.optimizer.grad_clip_norm = 10.0;
  SchedulerPreset s;
  s.type = "vqbet";
  s.num_warmup_steps = scheduler_warmup_steps;
  s.num_vqvae_training_steps = n_vqvae_training_steps;
  p.scheduler = s;
  return p;
}

}  // namespace lerobot
