// ACT network forward pass (see act_model.h). Layout is sequence-first inside the transformer.
#include "lerobot/policies/act/act_model.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/policies/linear.h"

namespace lerobot {

namespace {
constexpr const char* kState = "observation.state";
constexpr const char* kEnv = "observation.environment_state";
constexpr const char* kAction = "action";

int64_t feature_dim(const PolicyFeature& f, const std::string& key) {
  if (f.shape.size() != 1)
    throw_usage("feature '" + key + "' must be 1-D for ACT", "policy.input_features." + key);
  return f.shape[0];
}

const torch::Tensor& need(const Batch& b, const std::string& key) {
  auto it = b.find(key);
  if (it == b.end()) throw_usage("the batch has no '" + key + "'", key, "the policy's input_features need it");
  return it->second;
}
}  // namespace

ACTModelImpl::ACTModelImpl(const ACTConfig& c) : config_(c) {
  c.validate();
  const int64_t d = c.dim_model;
  image_keys_ = c.image_feature_keys();
  has_state_ = c.input_features.count(kState) > 0;
  has_env_ = c.input_features.count(kEnv) > 0;
  auto act = c.output_features.find(kAction);
  if (act == c.output_features.end())
    throw_usage("ACT needs an 'action' output feature", "policy.output_features");
  action_dim_ = feature_dim(act->second, kAction);
  if (image_keys_.empty() && !has_env_)
    throw_usage("ACT needs at least one image or 'observation.environment_state' among input_features",
                "policy.input_features");
  const int64_t state_dim = has_state_ ? feature_dim(c.input_features.at(kState), kState) : 0;

  if (c.use_vae) {
    vae_encoder = register_module("vae_encoder", ACTEncoder(c, /*is_vae_encoder=*/true));
    vae_encoder_cls_embed = register_module("vae_encoder_cls_embed", torch::nn::Embedding(1, d));
    if (has_state_)
      vae_encoder_robot_state_input_proj =
          register_module("vae_encoder_robot_state_input_proj", torch::nn::Linear(state_dim, d));
    vae_encoder_action_input_proj = register_module("vae_encoder_action_input_proj", torch::nn::Linear(action_dim_, d));
    vae_encoder_latent_output_proj =
        register_module("vae_encoder_latent_output_proj", torch::nn::Linear(d, 2 * c.latent_dim));
    const int64_t n_tokens = 1 + c.chunk_size + (has_state_ ? 1 : 0);
    vae_encoder_pos_enc = register_buffer("vae_encoder_pos_enc", sinusoidal_pos_embedding_1d(n_tokens, d).unsqueeze(0));
  }
  if (!image_keys_.empty()) {
    ResNetOptions ro;
    ro.name = c.vision_backbone;
    ro.dilate_layer4 = c.replace_final_stride_with_dilation;
    backbone = register_module("backbone", ResNetBackbone(ro));
  }
  encoder = register_module("encoder", ACTEncoder(c, /*is_vae_encoder=*/false));
  decoder = register_module("decoder", ACTDecoder(c));
  if (has_state_)
    encoder_robot_state_input_proj = register_module("encoder_robot_state_input_proj", torch::nn::Linear(state_dim, d));
  if (has_env_)
    encoder_env_state_input_proj = register_module(
        "encoder_env_state_input_proj", torch::nn::Linear(feature_dim(c.input_features.at(kEnv), kEnv), d));
  encoder_latent_input_proj = register_module("encoder_latent_input_proj", torch::nn::Linear(c.latent_dim, d));
  if (!image_keys_.empty())
    encoder_img_feat_input_proj = register_module(
        "encoder_img_feat_input_proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(backbone->out_channels(), d, 1)));
  const int64_t n_1d = 1 + (has_state_ ? 1 : 0) + (has_env_ ? 1 : 0);
  encoder_1d_feature_pos_embed = register_module("encoder_1d_feature_pos_embed", torch::nn::Embedding(n_1d, d));
  decoder_pos_embed = register_module("decoder_pos_embed", torch::nn::Embedding(c.chunk_size, d));
  action_head = register_module("action_head", torch::nn::Linear(d, action_dim_));
  reset_transformer_parameters();
}

void ACTModelImpl::reset_transformer_parameters() {
  torch::NoGradGuard no_grad;
  for (torch::nn::Module* m : std::vector<torch::nn::Module*>{encoder.ptr().get(), decoder.ptr().get()})
    for (auto& p : m->parameters(true))
      if (p.dim() > 1) torch::nn::init::xavier_uniform_(p);
}

torch::Tensor ACTModelImpl::camera_pos_embedding(const torch::Tensor& feat) {
  const int64_t h = feat.size(2), w = feat.size(3), n = h * w;
  if (cam_pos_.defined() && cam_pos_.size(0) == n && cam_pos_.scalar_type() == feat.scalar_type() &&
      cam_pos_.device() == feat.device() && cam_h_ == h)
    return cam_pos_;
  // Plain tensors even when made under InferenceMode (a policy evaluated before it trains).
  c10::InferenceMode normal_tensors(false);
  torch::NoGradGuard no_grad;
  cam_pos_ = sinusoidal_pos_embedding_2d(h, w, config_.dim_model / 2, feat.options()).flatten(2).permute({2, 0, 1});
  cam_h_ = h;
  return cam_pos_;
}

ACTForwardOutput ACTModelImpl::forward(const Batch& batch) {
  const ACTConfig& c = config_;
  const int64_t d = c.dim_model;
  const torch::Tensor ref = image_keys_.empty() ? need(batch, kEnv) : need(batch, image_keys_[0]);
  const int64_t bsz = ref.size(0);
  auto opts = ref.options().dtype(torch::kFloat32);
  ACTForwardOutput out;

  torch::Tensor latent;
  if (c.use_vae && is_training() && batch.count(kAction)) {
    const auto& actions = batch.at(kAction);  // (B, chunk, A)
    std::vector<torch::Tensor> tokens;
    tokens.push_back(vae_encoder_cls_embed->weight.unsqueeze(0).expand({bsz, 1, d}));
    if (has_state_) tokens.push_back(vae_encoder_robot_state_input_proj(need(batch, kState)).unsqueeze(1));
    tokens.push_back(linear(vae_encoder_action_input_proj, actions));
    auto vae_in = torch::cat(tokens, 1).transpose(0, 1);  // (S, B, D)
    auto pos = vae_encoder_pos_enc.detach().transpose(0, 1);  // (S, 1, D)
    auto head_pad = torch::zeros({bsz, has_state_ ? 2 : 1}, opts.dtype(torch::kBool));
    auto is_pad = batch.count("action_is_pad") ? batch.at("action_is_pad").to(torch::kBool)
                                               : torch::zeros({bsz, actions.size(1)}, opts.dtype(torch::kBool));
    auto mask = torch::cat({head_pad, is_pad}, 1);
    auto cls_out = vae_encoder(vae_in, pos, mask)[0];  // (B, D)
    auto params = vae_encoder_latent_output_proj(cls_out);
    out.mu = params.narrow(1, 0, c.latent_dim);
    out.log_sigma_x2 = params.narrow(1, c.latent_dim, c.latent_dim);
    latent = out.mu + (out.log_sigma_x2 / 2).exp() * torch::randn_like(out.mu);
  } else {
    latent = torch::zeros({bsz, c.latent_dim}, opts);
  }

  std::vector<torch::Tensor> tokens = {encoder_latent_input_proj(latent)};  // each (B, D)
  std::vector<torch::Tensor> pos = {encoder_1d_feature_pos_embed->weight.unsqueeze(1)};  // (n_1d, 1, D)
  if (has_state_) tokens.push_back(encoder_robot_state_input_proj(need(batch, kState)));
  if (has_env_) tokens.push_back(encoder_env_state_input_proj(need(batch, kEnv)));
  auto enc_tokens = torch::stack(tokens, 0);  // (n_1d, B, D)
  std::vector<torch::Tensor> all_tokens = {enc_tokens};
  for (const auto& key : image_keys_) {
    auto feat = backbone(need(batch, key));  // (B, 512, h, w)
    pos.push_back(camera_pos_embedding(feat));                    // (h*w, 1, D)
    feat = encoder_img_feat_input_proj(feat);                    // (B, D, h, w)
    all_tokens.push_back(feat.flatten(2).permute({2, 0, 1}));     // (h*w, B, D)
  }
  auto enc_in = torch::cat(all_tokens, 0);
  auto enc_pos = torch::cat(pos, 0);
  auto memory = encoder(enc_in, enc_pos);
  auto dec_in = torch::zeros({c.chunk_size, bsz, d}, enc_pos.options());
  auto dec_out = decoder(dec_in, memory, decoder_pos_embed->weight.unsqueeze(1), enc_pos);
  out.actions = action_head(dec_out.transpose(0, 1));  // (B, chunk, A)
  return out;
}

}  // namespace lerobot
