// ACTConfig field declarations and checks (LeRobot's __post_init__ / validate_features).
#include "lerobot/policies/act/configuration_act.h"

#include "lerobot/policies/config_checks.h"
#include "lerobot/policies/resnet_arch.h"

namespace lerobot {
void ACTConfig::visit(FieldVisitor& v) {
  visit_base(v);
  field(v, "chunk_size", chunk_size, "Length of the predicted action chunk");
  field(v, "n_action_steps", n_action_steps, "Actions executed per policy call (<= chunk_size)");
  field(v, "normalization_mapping", normalization_mapping_, "Normalization mode per feature type: MEAN_STD, MIN_MAX or IDENTITY");
  field(v, "vision_backbone", vision_backbone, "torchvision ResNet for the cameras: resnet18, resnet34, resnet50, resnet101 or resnet152");
  field(v, "pretrained_backbone_weights", pretrained_backbone_weights,
        "ImageNet weights by torchvision name (fetched once from the Hub as timm/<model>.tv_in1k), or a local "
        "safetensors file with torchvision keys; null: random init");
  field(v, "replace_final_stride_with_dilation", replace_final_stride_with_dilation, "Dilate instead of stride in layer4 (resnet50/101/152 only, as torchvision)");
  field(v, "pre_norm", pre_norm, "Pre-norm transformer layers");
  field(v, "dim_model", dim_model, "Transformer hidden size");
  field(v, "n_heads", n_heads, "Attention heads");
  field(v, "dim_feedforward", dim_feedforward, "Feed-forward hidden size");
  field(v, "feedforward_activation", feedforward_activation, "relu, gelu or glu");
  field(v, "n_encoder_layers", n_encoder_layers, "Transformer encoder layers");
  field(v, "n_decoder_layers", n_decoder_layers, "Transformer decoder layers");
  field(v, "use_vae", use_vae, "Train with the VAE objective");
  field(v, "latent_dim", latent_dim, "VAE latent size");
  field(v, "n_vae_encoder_layers", n_vae_encoder_layers, "VAE encoder layers");
  field(v, "temporal_ensemble_coeff", temporal_ensemble_coeff, "Temporal ensembling coefficient (needs n_action_steps=1)");
  field(v, "dropout", dropout, "Dropout in the transformer");
  field(v, "kl_weight", kl_weight, "Weight of the KL term when use_vae");
  field(v, "optimizer_lr", optimizer_lr, "Preset learning rate");
  field(v, "optimizer_weight_decay", optimizer_weight_decay, "Preset weight decay");
  field(v, "optimizer_lr_backbone", optimizer_lr_backbone, "Preset learning rate of the backbone");
}

void ACTConfig::validate() const {
  check_positive_policy_fields({
      {"chunk_size", chunk_size}, {"n_action_steps", n_action_steps}, {"dim_model", dim_model},
      {"n_heads", n_heads}, {"dim_feedforward", dim_feedforward}, {"n_encoder_layers", n_encoder_layers},
      {"n_decoder_layers", n_decoder_layers}, {"latent_dim", latent_dim}, {"n_vae_encoder_layers", n_vae_encoder_layers}});
  if (!(dropout >= 0.0 && dropout < 1.0))
    throw_usage("dropout must be in [0, 1), got " + std::to_string(dropout), "policy.dropout");
  if (!(optimizer_lr >= 0.0) || !(optimizer_lr_backbone >= 0.0) || !(optimizer_weight_decay >= 0.0))
    throw_usage("optimizer_lr, optimizer_lr_backbone and optimizer_weight_decay must be >= 0", "policy.optimizer_lr");
  check_resnet_arch(vision_backbone, "policy.vision_backbone");
  if (temporal_ensemble_coeff && n_action_steps > 1)
    throw_usage("temporal ensembling needs n_action_steps=1, got " + std::to_string(n_action_steps),
                "policy.n_action_steps", "pass --policy.n_action_steps=1");
  if (n_action_steps > chunk_size)
    throw_usage("n_action_steps (" + std::to_string(n_action_steps) + ") exceeds chunk_size (" +
                    std::to_string(chunk_size) + ")",
                "policy.n_action_steps", "lower --policy.n_action_steps or raise --policy.chunk_size");
  if (n_obs_steps != 1)
    throw_usage("ACT supports n_obs_steps=1 only, got " + std::to_string(n_obs_steps), "policy.n_obs_steps");
  if (dim_model % n_heads != 0)
    throw_usage("dim_model must be divisible by n_heads", "policy.dim_model");
}

std::optional<std::vector<int64_t>> ACTConfig::action_delta_indices() const {
  std::vector<int64_t> d(chunk_size);
  for (int64_t i = 0; i < chunk_size; ++i) d[i] = i;
  return d;
}

std::optional<TrainingPreset> ACTConfig::training_preset() const {
  TrainingPreset p;
  p.optimizer.type = "adamw";
  p.optimizer.lr = optimizer_lr;
  p.optimizer.weight_decay = optimizer_weight_decay;
  p.optimizer.betas = {0.9, 0.999};
  p.optimizer.eps = 1e-8;
  p.optimizer.grad_clip_norm = 10.0;
  return p;
}

}  // namespace lerobot
