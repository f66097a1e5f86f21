// Diffusion Policy network (see diffusion_model.h).
#include "lerobot/policies/diffusion/diffusion_model.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/policies/activation_checkpoint.h"
#include "lerobot/policies/unit_runner.h"

namespace lerobot {

namespace {
constexpr const char* kState = "observation.state";
constexpr const char* kEnv = "observation.environment_state";
constexpr const char* kImages = "observation.images";

NoiseSchedulerOptions scheduler_options(const DiffusionConfig& c) {
  NoiseSchedulerOptions o;
  o.type = c.noise_scheduler_type;
  o.num_train_timesteps = c.num_train_timesteps;
  o.beta_start = c.beta_start;
  o.beta_end = c.beta_end;
  o.beta_schedule = c.beta_schedule;
  o.clip_sample = c.clip_sample;
  o.clip_sample_range = c.clip_sample_range;
  o.prediction_type = c.prediction_type;
  return o;
}

RgbEncoderOptions encoder_options(const DiffusionConfig& c) {
  RgbEncoderOptions o = rgb_encoder_options(c);
  o.resize_shape = c.resize_shape;
  o.crop_shape = c.effective_crop_shape();
  return o;
}

int64_t feature_size(const DiffusionConfig& c, const std::string& key) {
  const auto& shape = c.input_features.at(key).shape;
  if (shape.size() != 1)
    throw_usage("feature '" + key + "' must be 1-D for Diffusion, got " + std::to_string(shape.size()) + " dims",
                "policy.input_features");
  return shape[0];
}
}  // namespace

// ---- U-Net blocks -------------------------------------------------------------------------------

DiffusionConv1dBlockImpl::DiffusionConv1dBlockImpl(int64_t in, int64_t out, int64_t k, int64_t groups) {
  block = register_module("block", torch::nn::Sequential(
                                       torch::nn::Conv1d(torch::nn::Conv1dOptions(in, out, k).padding(k / 2)),
                                       torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, out)),
                                       torch::nn::Mish()));
}

torch::Tensor DiffusionConv1dBlockImpl::forward(const torch::Tensor& x) { return block->forward(x); }

DiffusionResidualBlockImpl::DiffusionResidualBlockImpl(int64_t in, int64_t out, int64_t cond_dim, int64_t k,
                                                       int64_t groups, bool film_scale)
    : out_(out), film_scale_(film_scale) {
  conv1 = register_module("conv1", DiffusionConv1dBlock(in, out, k, groups));
  cond_encoder = register_module(
      "cond_encoder", torch::nn::Sequential(torch::nn::Mish(), torch::nn::Linear(cond_dim, film_scale ? 2 * out : out)));
  conv2 = register_module("conv2", DiffusionConv1dBlock(out, out, k, groups));
  if (in != out) residual_conv = register_module("residual_conv", torch::nn::Conv1d(torch::nn::Conv1dOptions(in, out, 1)));
}

torch::Tensor DiffusionResidualBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  auto h = conv1(x);
  auto emb = cond_encoder->forward(cond).unsqueeze(-1);
  if (film_scale_) h = emb.narrow(1, 0, out_) * h + emb.narrow(1, out_, out_);
  else h = h + emb;
  h = conv2(h);
  return h + (residual_conv ? residual_conv(x) : x);
}

DiffusionConditionalUnet1dImpl::DiffusionConditionalUnet1dImpl(const DiffusionConfig& c, int64_t action_dim,
                                                               int64_t global_cond_dim)
    : step_embed_dim_(c.diffusion_step_embed_dim), gradient_checkpointing_(c.gradient_checkpointing) {
  const int64_t d = c.diffusion_step_embed_dim;
  // 0: sinusoidal embedding (no weights): half = d/2, freq exp(-i ln(10000) / (half - 1)), [sin, cos].
  auto pos_emb = [d](torch::Tensor t) {
    const int64_t half = d / 2;
    const double scale = std::log(10000.0) / static_cast<double>(half - 1);
    auto freqs = torch::exp(torch::arange(half, torch::TensorOptions().device(t.device())) * -scale);
    auto e = t.unsqueeze(-1) * freqs.unsqueeze(0);
    return torch::cat({e.sin(), e.cos()}, -1);
  };
  diffusion_step_encoder = register_module(
      "diffusion_step_encoder",
      torch::nn::Sequential(torch::nn::Functional(pos_emb), torch::nn::Linear(d, d * 4), torch::nn::Mish(),
                            torch::nn::Linear(d * 4, d)));
  const int64_t cond_dim = d + global_cond_dim;
  std::vector<std::pair<int64_t, int64_t>> in_out = {{action_dim, c.down_dims[0]}};
  for (size_t i = 0; i + 1 < c.down_dims.size(); ++i) in_out.emplace_back(c.down_dims[i], c.down_dims[i + 1]);
  auto res = [&](int64_t in, int64_t out) {
    return DiffusionResidualBlock(in, out, cond_dim, c.kernel_size, c.n_groups, c.use_film_scale_modulation);
  };
  down_modules = register_module("down_modules", torch::nn::ModuleList());
  for (size_t i = 0; i < in_out.size(); ++i) {
    const auto [in, out] = in_out[i];
    torch::nn::ModuleList m;
    m->push_back(res(in, out));
    m->push_back(res(out, out));
    if (i + 1 < in_out.size()) m->push_back(torch::nn::Conv1d(torch::nn::Conv1dOptions(out, out, 3).stride(2).padding(1)));
    else m->push_back(torch::nn::Identity());
    down_modules->push_back(m);
  }
  const int64_t last = c.down_dims.back();
  mid_modules = register_module("mid_modules", torch::nn::ModuleList(res(last, last), res(last, last)));
  // LeRobot's up path: reversed(in_out[1:]); its "is last" test never fires, so every up block
  // ends with a ConvTranspose1d.
  up_modules = register_module("up_modules", torch::nn::ModuleList());
  for (size_t i = in_out.size() - 1; i >= 1; --i) {
    const auto [out, in] = in_out[i];
    torch::nn::ModuleList m;
    m->push_back(res(in * 2, out));
    m->push_back(res(out, out));
    m->push_back(torch::nn::ConvTranspose1d(torch::nn::ConvTranspose1dOptions(out, out, 4).stride(2).padding(1)));
    up_modules->push_back(m);
  }
  final_conv = register_module(
      // LeRobot builds this block without n_groups: its GroupNorm keeps the block's default of 8.
      "final_conv", torch::nn::Sequential(DiffusionConv1dBlock(c.down_dims[0], c.down_dims[0], c.kernel_size,
                                                               kFinalConvGroups),
                                          torch::nn::Conv1d(torch::nn::Conv1dOptions(c.down_dims[0], action_dim, 1))));
}

torch::Tensor DiffusionConditionalUnet1dImpl::forward(const torch::Tensor& sample, const torch::Tensor& timestep,
                                                      const torch::Tensor& global_cond) {
  auto x = sample.transpose(1, 2);  // (B, A, T)
  auto t_emb = diffusion_step_encoder->forward(timestep);
  auto cond = global_cond.defined() ? torch::cat({t_emb, global_cond}, -1) : t_emb;
  // Each residual block is a unit (run_unit). LeRobot's gradient_checkpointing recomputes them in
  // training (its blocks draw nothing random: no RNG state to keep).
  const bool recompute = gradient_checkpointing_ && is_training();
  auto block = [&](const std::shared_ptr<torch::nn::Module>& m, const torch::Tensor& h) {
    auto res = std::dynamic_pointer_cast<DiffusionResidualBlockImpl>(m);
    UnitFn fn = [res](const std::vector<torch::Tensor>& in) { return std::vector<torch::Tensor>{res->forward(in[0], in[1])}; };
    if (recompute) fn = [fn](const std::vector<torch::Tensor>& in) { return recompute_in_backward(fn, in, false); };
    return run_unit(*res, {h, cond}, fn)[0];
  };
  std::vector<torch::Tensor> skips;
  for (const auto& m : *down_modules) {
    auto& list = *m->as<torch::nn::ModuleList>();
    x = block(list[0], x);
    x = block(list[1], x);
    skips.push_back(x);
    if (auto* conv = list[2]->as<torch::nn::Conv1d>()) x = conv->forward(x);
  }
  for (const auto& m : *mid_modules) x = block(m, x);
  for (const auto& m : *up_modules) {
    auto& list = *m->as<torch::nn::ModuleList>();
    x = torch::cat({x, skips.back()}, 1);
    skips.pop_back();
    x = block(list[0], x);
    x = block(list[1], x);
    x = list[2]->as<torch::nn::ConvTranspose1d>()->forward(x);
  }
  return final_conv->forward(x).transpose(1, 2);
}

// ---- DiffusionModel -----------------------------------------------------------------------------

DiffusionModelImpl::DiffusionModelImpl(const DiffusionConfig& c) : config_(c), scheduler_(scheduler_options(c)) {
  if (!c.input_features.count(kState))
    throw_usage("Diffusion needs 'observation.state' among the inputs", "policy.input_features",
                "train on a dataset with an observation.state feature");
  auto action_it = c.output_features.find("action");
  if (action_it == c.output_features.end() || action_it->second.shape.size() != 1)
    throw_usage("Diffusion needs a 1-D 'action' output feature", "policy.output_features");
  action_dim_ = action_it->second.shape[0];
  has_env_ = c.input_features.count(kEnv) > 0;
  const auto images = c.image_feature_keys();
  n_cams_ = static_cast<int64_t>(images.size());
  if (n_cams_ == 0 && !has_env_)
    throw_usage("Diffusion needs at least one camera or observation.environment_state among the inputs",
                "policy.input_features");
  for (const auto& k : images)
    if (c.input_features.at(k).shape != c.input_features.at(images.front()).shape)
      throw_usage("camera '" + k + "' does not match '" + images.front() + "': Diffusion needs equal image shapes",
                  "policy.input_features", "resize the cameras to one shape");
  int64_t global_cond_dim = feature_size(c, kState);
  if (n_cams_ > 0) {
    if (c.use_separate_rgb_encoder_per_camera) {
      rgb_encoders = torch::nn::ModuleList();
      for (int64_t i = 0; i < n_cams_; ++i) {
        encoder_list_.push_back(DiffusionRgbEncoder(encoder_options(c), c.image_feature_keys().front()));
        rgb_encoders->push_back(encoder_list_.back());
      }
      register_module("rgb_encoder", rgb_encoders);
    } else {
      rgb_encoder = register_module("rgb_encoder", DiffusionRgbEncoder(encoder_options(c), c.image_feature_keys().front()));
      encoder_list_.push_back(rgb_encoder);
    }
    global_cond_dim += encoder_list_.front()->feature_dim() * n_cams_;
  }
  if (has_env_) global_cond_dim += feature_size(c, kEnv);
  unet = register_module("unet", DiffusionConditionalUnet1d(c, action_dim_, global_cond_dim * c.n_obs_steps));
}

torch::Tensor DiffusionModelImpl::global_conditioning(const Batch& batch) {
  const auto& state = batch.at(kState);  // (B, n, S)
  const int64_t B = state.size(0), n = state.size(1);
  std::vector<torch::Tensor> feats = {state};
  if (n_cams_ > 0) {
    const auto& images = batch.at(kImages);  // (B, n, N, C, H, W)
    if (config_.use_separate_rgb_encoder_per_camera) {
      std::vector<torch::Tensor> per_cam;
      for (int64_t i = 0; i < n_cams_; ++i) {
        auto x = images.select(2, i).flatten(0, 1);  // (B*n, C, H, W)
        per_cam.push_back(encoder_list_[i]->forward(x).view({B, n, -1}));
      }
      feats.push_back(torch::cat(per_cam, -1));
    } else {
      auto x = images.flatten(0, 2);  // (B*n*N, C, H, W)
      feats.push_back(rgb_encoder->forward(x).view({B, n, -1}));
    }
  }
  if (has_env_) feats.push_back(batch.at(kEnv));
  return torch::cat(feats, -1).flatten(1);
}

torch::Tensor DiffusionModelImpl::compute_loss(const Batch& batch) {
  auto global_cond = global_conditioning(batch);
  const auto& trajectory = batch.at("action");  // (B, horizon, A)
  auto eps = torch::randn(trajectory.sizes(), trajectory.options());
  auto t = torch::randint(0, config_.num_train_timesteps, {trajectory.size(0)},
                          torch::TensorOptions().dtype(torch::kLong).device(trajectory.device()));
  auto noisy = scheduler_.add_noise(trajectory, eps, t);
  auto pred = unet(noisy, t, global_cond);
  const auto& target = config_.prediction_type == "epsilon" ? eps : trajectory;
  auto loss = (pred - target).pow(2);
  if (config_.do_mask_loss_for_padding) {
    auto it = batch.find("action_is_pad");
    if (it == batch.end())
      throw_usage("do_mask_loss_for_padding needs 'action_is_pad' in the batch", "policy.do_mask_loss_for_padding");
    auto valid = it->second.logical_not().to(loss.scalar_type()).unsqueeze(-1);  // (B, horizon, 1)
    auto denom = torch::clamp_min(valid.sum() * static_cast<double>(loss.size(2)), 1.0);
    return (loss * valid).sum() / denom;
  }
  return loss.mean();
}

torch::Tensor DiffusionModelImpl::conditional_sample(int64_t batch_size, const torch::Tensor& global_cond,
                                                     torch::Tensor noise) {
  auto opts = global_cond.options();
  auto sample = noise.defined() ? noise.to(opts) : torch::randn({batch_size, config_.horizon, action_dim_}, opts);
  scheduler_.set_timesteps(config_.effective_num_inference_steps());
  for (int64_t t : scheduler_.timesteps()) {
    auto ts = torch::full({batch_size}, t, torch::TensorOptions().dtype(torch::kLong).device(sample.device()));
    sample = scheduler_.step(unet(sample, ts, global_cond), t, sample);
  }
  return sample;
}

torch::Tensor DiffusionModelImpl::generate_actions(const Batch& batch, torch::Tensor noise) {
  const auto& state = batch.at(kState);
  if (state.dim() != 3 || state.size(1) != config_.n_obs_steps)
    throw_usage("observation.state must be (B, n_obs_steps=" + std::to_string(config_.n_obs_steps) + ", S)",
                "observation.state");
  auto global_cond = global_conditioning(batch);
  auto actions = conditional_sample(state.size(0), global_cond, std::move(noise));
  return actions.narrow(1, config_.n_obs_steps - 1, config_.n_action_steps);
}

}  // namespace lerobot
