// VQ-BeT network (see vqbet_model.h).
#include "lerobot/policies/vqbet/vqbet_model.h"

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
constexpr const char* kState = "observation.state";
constexpr const char* kImages = "observation.images";

// FocalLoss(gamma=2), averaged: -(1 - p_t)^2 log p_t of the target class.
torch::Tensor focal_loss(const torch::Tensor& logits, const torch::Tensor& target) {
  const auto logpt = torch::log_softmax(logits, -1).gather(-1, target.view({-1, 1})).view({-1});
  const auto pt = logpt.exp();
  return (-(1 - pt).pow(2) * logpt).mean();
}

// torch.multinomial(probs, 1) row by row, as its one-sample path computes it: the argmax of
// probs / q with q ~ Exp(1) drawn from the default generator (the same draws, so the same codes
// for the same seed), without the validity check that reads the probabilities back to the host.
torch::Tensor sample_one(const torch::Tensor& probs) {
  const auto q = torch::empty_like(probs).exponential_(1);
  return (probs / q).argmax(-1, true);
}

RgbEncoderOptions encoder_options(const VQBeTConfig& c) {
  RgbEncoderOptions o = rgb_encoder_options(c);
  o.crop_shape = c.crop_shape;
  return o;
}

int64_t action_dim_of(const VQBeTConfig& c) { return c.output_features.at("action").shape.at(0); }
}  // namespace

torch::nn::Sequential vqbet_mlp(int64_t in, const std::vector<int64_t>& hidden) {
  torch::nn::Sequential s;
  for (size_t i = 0; i + 1 < hidden.size(); ++i) {
    s->push_back(torch::nn::Linear(in, hidden[i]));
    s->push_back(torch::nn::ReLU());
    in = hidden[i];
  }
  s->push_back(torch::nn::Linear(in, hidden.back()));
  return s;
}

// ---- VqVae --------------------------------------------------------------------------------------

VqVaeImpl::VqVaeImpl(const VQBeTConfig& c) : chunk_(c.action_chunk_size), action_dim_(action_dim_of(c)) {
  discretized = register_buffer("discretized", torch::tensor(false));
  vq_layer = register_module("vq_layer", ResidualVQ(c.vqvae_embedding_dim, kVqvaeNumLayers, c.vqvae_n_embed));
  const int64_t h = c.vqvae_enc_hidden_dim;
  encoder = register_module("encoder", vqbet_mlp(action_dim_ * chunk_, {h, h, c.vqvae_embedding_dim}));
  decoder = register_module("decoder", vqbet_mlp(c.vqvae_embedding_dim, {h, h, action_dim_ * chunk_}));
}

VqVaeImpl::Output VqVaeImpl::forward_chunks(const torch::Tensor& chunks) {
  const int64_t M = chunks.size(0);
  const auto state = chunks.reshape({M, -1});
  const auto rep = encoder->forward(state);
  auto vq = vq_layer->forward(rep.view({M, 1, rep.size(1)}));
  const auto decoded = decoder->forward(vq.quantized.view({M, -1}));
  const auto recon = (state - decoded).abs().mean();
  return {recon + vq.losses.sum() * 5, recon.detach(), vq.indices.view({M, -1})};
}

torch::Tensor VqVaeImpl::codes_of(const torch::Tensor& chunks) {
  torch::NoGradGuard no_grad;
  const int64_t M = chunks.size(0);
  const auto rep = encoder->forward(chunks.reshape({M, -1}));
  return vq_layer->forward(rep.view({M, 1, rep.size(1)})).indices.view({M, -1});
}

torch::Tensor VqVaeImpl::embedding_of(const torch::Tensor& codes) {
  torch::NoGradGuard no_grad;
  return vq_layer->codebook_vectors(codes).sum(0);
}

torch::Tensor VqVaeImpl::decode(const torch::Tensor& latent) {
  return decoder->forward(latent).view({latent.size(0), chunk_, action_dim_});
}

// ---- VQBeTHead ----------------------------------------------------------------------------------

VQBeTHeadImpl::VQBeTHeadImpl(const VQBeTConfig& c) : config_(c), action_dim_(action_dim_of(c)) {
  vqvae_model = register_module("vqvae_model", VqVae(c));
  const int64_t C = c.vqvae_n_embed;
  if (c.sequentially_select) {
    map_to_cbet_preds_primary_bin = register_module("map_to_cbet_preds_primary_bin", vqbet_mlp(c.gpt_output_dim, {C}));
    map_to_cbet_preds_secondary_bin =
        register_module("map_to_cbet_preds_secondary_bin", vqbet_mlp(c.gpt_output_dim + C, {C}));
  } else {
    map_to_cbet_preds_bin = register_module("map_to_cbet_preds_bin", vqbet_mlp(c.gpt_output_dim, {kVqvaeNumLayers * C}));
  }
  map_to_cbet_preds_offset = register_module(
      "map_to_cbet_preds_offset", vqbet_mlp(c.gpt_output_dim, {kVqvaeNumLayers * C * c.action_chunk_size * action_dim_}));
}

VQBeTHeadImpl::Output VQBeTHeadImpl::forward(const torch::Tensor& features) {
  const int64_t N = features.size(0), T = features.size(1), NT = N * T, G = kVqvaeNumLayers;
  const int64_t C = config_.vqvae_n_embed, W = config_.action_chunk_size;
  const double temperature = config_.bet_softmax_temperature;
  const auto x = features.reshape({NT, -1});
  const auto offsets = map_to_cbet_preds_offset->forward(x).view({NT, G, C, -1});  // (NT, G, C, W·A)
  Output out;
  if (config_.sequentially_select) {
    const auto primary_logits = map_to_cbet_preds_primary_bin->forward(x);
    const auto primary = sample_one(torch::softmax(primary_logits / temperature, -1)).view({NT});
    const auto secondary_logits =
        map_to_cbet_preds_secondary_bin->forward(torch::cat({x, one_hot_on_device(primary, C, x.scalar_type())}, 1));
    const auto secondary = sample_one(torch::softmax(secondary_logits / temperature, -1)).view({NT});
    out.sampled_centers = torch::stack({primary, secondary}, 1);
    out.cbet_logits = torch::stack({primary_logits, secondary_logits}, 1);
  } else {
    out.cbet_logits = map_to_cbet_preds_bin->forward(x).view({NT, G, C});
    const auto probs = torch::softmax(out.cbet_logits / temperature, -1);
    out.sampled_centers = sample_one(probs.view({-1, C})).view({NT, G});
  }
  const auto index = out.sampled_centers.view({NT, G, 1, 1}).expand({NT, G, 1, offsets.size(3)});
  const auto sampled_offsets = offsets.gather(2, index).squeeze(2).sum(1);  // (NT, W·A)
  {
    torch::NoGradGuard no_grad;
    out.decoded_action = vqvae_model->decode(vqvae_model->embedding_of(out.sampled_centers)).detach();
  }
  out.predicted_action = (out.decoded_action + sampled_offsets.view({NT, W, -1})).view({N, T, -1});
  return out;
}

torch::Tensor VQBeTHeadImpl::loss(const Output& pred, const torch::Tensor& target,
                                  std::map<std::string, torch::Tensor>& values) {
  const int64_t W = config_.action_chunk_size;
  const int64_t NT = pred.predicted_action.size(0) * pred.predicted_action.size(1);
  const auto predicted = pred.predicted_action.view({NT, W, -1});
  const auto action_seq = target.reshape({NT, W, -1});
  const auto bins = vqvae_model->codes_of(action_seq);  // (NT, 2): the ground-truth codes
  const auto offset_loss = torch::l1_loss(action_seq, predicted);
  const auto cbet_loss = focal_loss(pred.cbet_logits.select(1, 0), bins.select(1, 0)) * config_.primary_code_loss_weight +
                         focal_loss(pred.cbet_logits.select(1, 1), bins.select(1, 1)) * config_.secondary_code_loss_weight;
  {
    torch::NoGradGuard no_grad;
    const auto err = action_seq - predicted;
    values["classification_loss"] = cbet_loss.detach();
    values["offset_loss"] = offset_loss.detach();
    values["equal_primary_code_rate"] = bins.select(1, 0).eq(pred.sampled_centers.select(1, 0)).sum().to(torch::kFloat) / NT;
    values["equal_secondary_code_rate"] = bins.select(1, 1).eq(pred.sampled_centers.select(1, 1)).sum().to(torch::kFloat) / NT;
    values["vq_action_error"] = (action_seq - pred.decoded_action).abs().mean();
    values["offset_action_error"] = err.abs().mean();
    values["action_error_max"] = err.abs().max();
    values["action_mse_error"] = err.pow(2).mean();
  }
  return cbet_loss + offset_loss * config_.offset_loss_weight;
}

// ---- VQBeTModel ---------------------------------------------------------------------------------

VQBeTModelImpl::VQBeTModelImpl(const VQBeTConfig& c) : config_(c) {
  rgb_encoder = register_module("rgb_encoder", RgbEncoder(encoder_options(c), c.image_feature_keys().front()));
  action_token = register_parameter("action_token", torch::randn({1, 1, c.gpt_input_dim}));
  const int64_t state_dim = c.input_features.at(kState).shape.at(0);
  state_projector = register_module("state_projector", vqbet_mlp(state_dim, {c.gpt_input_dim}));
  rgb_feature_projector = register_module("rgb_feature_projector", vqbet_mlp(rgb_encoder->feature_dim(), {c.gpt_input_dim}));
  policy = register_module("policy", Gpt(c));
  action_head = register_module("action_head", VQBeTHead(c));
  const int64_t tokens = c.n_action_pred_token + c.n_obs_steps - 1;
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < tokens; ++i) rows.push_back(torch::arange(i, i + c.action_chunk_size, torch::kLong));
  select_target_actions_indices = register_buffer("select_target_actions_indices", torch::stack(rows, 0));
}

VQBeTHeadImpl::Output VQBeTModelImpl::head_output(const Batch& batch) {
  const auto& state = batch.at(kState);
  const auto& images = batch.at(kImages);  // (B, n, N, C, H, W)
  const int64_t B = state.size(0), n = state.size(1), n_cams = images.size(2);
  if (n != config_.n_obs_steps)
    throw_usage("VQ-BeT got " + std::to_string(n) + " observation steps; n_obs_steps is " +
                    std::to_string(config_.n_obs_steps),
                kState);
  const auto features = rgb_encoder->forward(images.flatten(0, 2)).view({B, n, n_cams, -1});
  const auto rgb_tokens = rgb_feature_projector->forward(features);  // (B, n, N, D)
  std::vector<torch::Tensor> per_step;
  for (int64_t i = 0; i < n_cams; ++i) per_step.push_back(rgb_tokens.select(2, i));
  per_step.push_back(state_projector->forward(state));
  per_step.push_back(action_token.expand({B, n, action_token.size(2)}));
  auto tokens = torch::stack(per_step, 2).reshape({B, -1, action_token.size(2)});  // interleaved per step
  const int64_t extra = config_.n_action_pred_token - 1;
  if (extra > 0) tokens = torch::cat({tokens, action_token.expand({B, extra, action_token.size(2)})}, 1);
  const auto out = policy->forward(tokens);
  // The action-query outputs: one per observation step (at stride inputs + 1, as LeRobot counts
  // its input features), then the future queries at the end.
  const auto k = static_cast<int64_t>(config_.input_features.size());
  const auto opts = torch::TensorOptions().dtype(torch::kLong).device(out.device());
  auto picked = out.index_select(1, torch::arange(n, opts).mul_(k + 1).add_(k));
  if (extra > 0) picked = torch::cat({picked, out.narrow(1, out.size(1) - extra, extra)}, 1);
  return action_head->forward(picked);
}

torch::Tensor VQBeTModelImpl::rollout(const Batch& batch) {
  const auto out = head_output(batch);
  const int64_t B = out.predicted_action.size(0);
  return out.predicted_action.select(1, config_.n_obs_steps - 1).reshape({B, config_.action_chunk_size, -1});
}

torch::Tensor VQBeTModelImpl::loss(const Batch& batch, std::map<std::string, torch::Tensor>& values) {
  const auto out = head_output(batch);
  const auto& action = batch.at("action");  // (B, L, A)
  const auto idx = select_target_actions_indices;
  const auto target = action.index_select(1, idx.reshape({-1})).view({action.size(0), idx.size(0), idx.size(1), action.size(2)});
  return action_head->loss(out, target, values);
}

}  // namespace lerobot
