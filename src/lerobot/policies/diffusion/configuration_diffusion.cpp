// DiffusionConfig field declarations and checks (LeRobot's __post_init__).
#include "lerobot/policies/diffusion/configuration_diffusion.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/config_checks.h"
#include "lerobot/policies/resnet_arch.h"

namespace lerobot {

void DiffusionConfig::visit(FieldVisitor& v) {
  visit_base(v);
  field(v, "horizon", horizon, "Length of the denoised action trajectory (a multiple of 2^len(down_dims))");
  field(v, "n_action_steps", n_action_steps, "Actions executed per policy call (<= horizon - n_obs_steps + 1)");
  field(v, "normalization_mapping", normalization_mapping_, "Normalization mode per feature type: MEAN_STD, MIN_MAX or IDENTITY");
  field(v, "drop_n_last_frames", drop_n_last_frames_, "Frames at each episode end the sampler never starts from");
  field(v, "vision_backbone", vision_backbone, "torchvision ResNet for the cameras: resnet18, resnet34, resnet50, resnet101 or resnet152");
  field(v, "resize_shape", resize_shape, "(H, W) the images are resized to before the backbone; null: no resize");
  field(v, "crop_ratio", crop_ratio, "Crop size as a fraction of resize_shape, in (0, 1]; 1: no crop");
  field(v, "crop_shape", crop_shape, "(H, W) crop (random in training, centre in eval); null: no crop");
  field(v, "crop_is_random", crop_is_random, "Random crop in training (centre crop in eval always)");
  field(v, "pretrained_backbone_weights", pretrained_backbone_weights,
        "ImageNet weights by torchvision name (fetched once from the Hub as timm/<model>.tv_in1k), or a local "
        "safetensors file with torchvision keys; null: random init");
  field(v, "use_group_norm", use_group_norm, "GroupNorm (C/16 groups) instead of BatchNorm in the backbone");
  field(v, "spatial_softmax_num_keypoints", spatial_softmax_num_keypoints, "Keypoints of the spatial softmax");
  field(v, "use_separate_rgb_encoder_per_camera", use_separate_rgb_encoder_per_camera, "One RGB encoder per camera");
  field(v, "down_dims", down_dims, "Channels of each U-Net down stage");
  field(v, "kernel_size", kernel_size, "U-Net convolution kernel size");
  field(v, "n_groups", n_groups, "GroupNorm groups in the U-Net blocks");
  field(v, "diffusion_step_embed_dim", diffusion_step_embed_dim, "Size of the diffusion-step embedding");
  field(v, "use_film_scale_modulation", use_film_scale_modulation, "FiLM with scale and bias (else bias only)");
  field(v, "gradient_checkpointing", gradient_checkpointing, "Recompute the U-Net's residual blocks in backward when training (less activation memory)");
  field(v, "noise_scheduler_type", noise_scheduler_type, "DDPM or DDIM");
  field(v, "num_train_timesteps", num_train_timesteps, "Diffusion steps of the forward process");
  field(v, "beta_schedule", beta_schedule, "squaredcos_cap_v2, linear or scaled_linear");
  field(v, "beta_start", beta_start, "First beta (linear schedules)");
  field(v, "beta_end", beta_end, "Last beta (linear schedules)");
  field(v, "prediction_type", prediction_type, "What the U-Net predicts: epsilon or sample");
  field(v, "clip_sample", clip_sample, "Clip the predicted clean sample to +-clip_sample_range when denoising");
  field(v, "clip_sample_range", clip_sample_range, "Clipping range of clip_sample");
  field(v, "num_inference_steps", num_inference_steps, "Denoising steps at inference; null: num_train_timesteps");
  field(v, "compile_model", compile_model, "torch.compile in Python; accepted, no effect here");
  field(v, "compile_mode", compile_mode, "torch.compile mode in Python; accepted, no effect here");
  field(v, "do_mask_loss_for_padding", do_mask_loss_for_padding, "Leave copy-padded action steps out of the loss");
  field(v, "optimizer_lr", optimizer_lr, "Preset learning rate");
  field(v, "optimizer_betas", optimizer_betas, "Preset Adam betas");
  field(v, "optimizer_eps", optimizer_eps, "Preset Adam eps");
  field(v, "optimizer_weight_decay", optimizer_weight_decay, "Preset weight decay (L2, Adam)");
  field(v, "scheduler_name", scheduler_name, "Preset diffusers scheduler name");
  field(v, "scheduler_warmup_steps", scheduler_warmup_steps, "Preset warm-up steps");
}

namespace {
void check_positive_pair(const std::optional<std::vector<int64_t>>& v, const char* name) {
  if (!v) return;
  if (v->size() != 2 || (*v)[0] <= 0 || (*v)[1] <= 0)
    throw_usage(std::string(name) + " must be a pair of positive integers", std::string("policy.") + name,
                std::string("pass --policy.") + name + "=\"[H, W]\" or null");
}
}  // namespace

void DiffusionConfig::validate() const {
  check_resnet_arch(vision_backbone, "policy.vision_backbone");
  if (prediction_type != "epsilon" && prediction_type != "sample")
    throw_usage("prediction_type must be epsilon or sample, got '" + prediction_type + "'", "policy.prediction_type");
  if (noise_scheduler_type != "DDPM" && noise_scheduler_type != "DDIM")
    throw_usage("noise_scheduler_type must be DDPM or DDIM, got '" + noise_scheduler_type + "'",
                "policy.noise_scheduler_type");
  if (beta_schedule != "squaredcos_cap_v2" && beta_schedule != "linear" && beta_schedule != "scaled_linear")
    throw_usage("beta_schedule '" + beta_schedule + "' is not supported", "policy.beta_schedule",
                "use squaredcos_cap_v2, linear or scaled_linear");
  check_positive_pair(resize_shape, "resize_shape");
  check_positive_pair(crop_shape, "crop_shape");
  if (!(crop_ratio > 0.0 && crop_ratio <= 1.0))
    throw_usage("crop_ratio must be in (0, 1], got " + std::to_string(crop_ratio), "policy.crop_ratio");
  check_positive_policy_fields({
      {"n_obs_steps", n_obs_steps}, {"horizon", horizon}, {"n_action_steps", n_action_steps},
      {"kernel_size", kernel_size}, {"n_groups", n_groups}, {"diffusion_step_embed_dim", diffusion_step_embed_dim},
      {"num_train_timesteps", num_train_timesteps}, {"spatial_softmax_num_keypoints", spatial_softmax_num_keypoints}});
  if (drop_n_last_frames_ < 0) throw_usage("drop_n_last_frames must be >= 0", "policy.drop_n_last_frames");
  if (num_inference_steps && (*num_inference_steps < 1 || *num_inference_steps > num_train_timesteps))
    throw_usage("num_inference_steps must be in [1, num_train_timesteps=" + std::to_string(num_train_timesteps) + "]",
                "policy.num_inference_steps");
  if (down_dims.empty()) throw_usage("down_dims must not be empty", "policy.down_dims");
  for (auto d : down_dims)
    if (d < 1 || d % n_groups != 0)
      throw_usage("every down_dims entry must be a positive multiple of n_groups=" + std::to_string(n_groups),
                  "policy.down_dims");
  if (down_dims[0] % kFinalConvGroups != 0)
    throw_usage("down_dims[0] must be a multiple of 8 (the U-Net's final block has 8 GroupNorm groups, as in LeRobot)",
                "policy.down_dims");
  const int64_t factor = int64_t{1} << down_dims.size();
  if (horizon % factor != 0)
    throw_usage("horizon (" + std::to_string(horizon) + ") must be a multiple of 2^len(down_dims) = " +
                    std::to_string(factor),
                "policy.horizon", "pass --policy.horizon=<a multiple of " + std::to_string(factor) + ">");
  if (n_action_steps > horizon - n_obs_steps + 1)
    throw_usage("n_action_steps (" + std::to_string(n_action_steps) + ") exceeds horizon - n_obs_steps + 1 = " +
                    std::to_string(horizon - n_obs_steps + 1),
                "policy.n_action_steps", "lower --policy.n_action_steps or raise --policy.horizon");
  if (use_group_norm && pretrained_backbone_weights)
    throw_usage("use_group_norm cannot be used with pretrained_backbone_weights (they are batch-norm weights)",
                "policy.use_group_norm", "pass --policy.pretrained_backbone_weights=null or --policy.use_group_norm=false");
  if (optimizer_betas.size() != 2) throw_usage("optimizer_betas must have 2 values", "policy.optimizer_betas");
}

std::optional<std::vector<int64_t>> DiffusionConfig::effective_crop_shape() const {
  if (resize_shape) {
    if (crop_ratio < 1.0)
      return std::vector<int64_t>{static_cast<int64_t>((*resize_shape)[0] * crop_ratio),
                                  static_cast<int64_t>((*resize_shape)[1] * crop_ratio)};
    return std::nullopt;
  }
  return crop_shape;
}

std::optional<std::vector<int64_t>> DiffusionConfig::observation_delta_indices() const {
  std::vector<int64_t> d;
  for (int64_t i = 1 - n_obs_steps; i <= 0; ++i) d.push_back(i);
  return d;
}

std::optional<std::vector<int64_t>> DiffusionConfig::action_delta_indices() const {
  std::vector<int64_t> d;
  for (int64_t i = 1 - n_obs_steps; i < 1 - n_obs_steps + horizon; ++i) d.push_back(i);
  return d;
}

std::optional<TrainingPreset> DiffusionConfig::training_preset() const {
  TrainingPreset p;
  p.optimizer.type = "adam";
  p.optimizer.lr = optimizer_lr;
  p.optimizer.betas = optimizer_betas;
  p.optimizer.eps = optimizer_eps;
  p.optimizer.weight_decay = optimizer_weight_decay;
  p.optimizer.grad_clip_norm = 10.0;
  p.scheduler = SchedulerPreset{"diffuser", scheduler_name, scheduler_warmup_steps, std::nullopt};
  return p;
}

}  // namespace lerobot
