// SmolVLA's flow-matching model (see vla_flow_matching.h).
#include "lerobot/policies/smolvla/vla_flow_matching.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/policies/linear.h"

namespace lerobot {
namespace {

namespace F = torch::nn::functional;

}  // namespace

VLAFlowMatchingImpl::VLAFlowMatchingImpl(const SmolVLAConfig& config, const SmolVLMArch& arch,
                                         int64_t fake_image_token, int64_t global_image_token)
    : config_(config), fake_image_token_(fake_image_token), global_image_token_(global_image_token) {
  SmolVLMWithExpertOptions o;
  o.attention_mode = config.attention_mode;
  o.num_expert_layers = config.num_expert_layers;
  o.num_vlm_layers = config.num_vlm_layers;
  o.self_attn_every_n_layers = config.self_attn_every_n_layers;
  o.expert_width_multiplier = config.expert_width_multiplier;
  vlm_with_expert = register_module("vlm_with_expert", SmolVLMWithExpert(arch, o));
  const int64_t e = vlm_with_expert->expert_hidden();
  if (e % 2 != 0)  // the time step's sine-cosine embedding has e/2 of each
    throw_usage("the action expert's width " + std::to_string(e) + " (the VLM's " +
                    std::to_string(vlm_with_expert->vlm_hidden()) + " x expert_width_multiplier) must be even",
                "policy.expert_width_multiplier", "pick a multiplier that gives an even width");
  state_proj = register_module("state_proj", torch::nn::Linear(config.max_state_dim, vlm_with_expert->vlm_hidden()));
  action_in_proj = register_module("action_in_proj", torch::nn::Linear(config.max_action_dim, e));
  action_out_proj = register_module("action_out_proj", torch::nn::Linear(e, config.max_action_dim));
  action_time_mlp_in = register_module("action_time_mlp_in", torch::nn::Linear(2 * e, e));
  action_time_mlp_out = register_module("action_time_mlp_out", torch::nn::Linear(e, e));
  vlm_with_expert->set_trainable(config.freeze_vision_encoder, config.train_expert_only);
  for (auto& p : state_proj->parameters()) p.set_requires_grad(config.train_state_proj);
}

VLAFlowMatchingImpl::Embedded VLAFlowMatchingImpl::embed_prefix(const VlaInputs& in) {
  std::vector<torch::Tensor> embs, pads;
  std::vector<int64_t> att;
  const int64_t b = in.state.size(0);
  auto device = in.state.device();
  auto special = [&](std::vector<int64_t> ids) {  // made on the device: no host-to-device copy
    std::vector<torch::Tensor> parts;
    for (int64_t id : ids) parts.push_back(torch::full({1}, id, torch::TensorOptions().dtype(torch::kInt64).device(device)));
    auto t = torch::cat(parts);
    auto emb = vlm_with_expert->embed_language_tokens(t).unsqueeze(0).expand({b, -1, -1});
    embs.push_back(emb);
    pads.push_back(torch::ones({b, emb.size(1)}, torch::TensorOptions().dtype(torch::kBool).device(device)));
    att.insert(att.end(), emb.size(1), 0);
  };
  for (size_t i = 0; i < in.images.size(); ++i) {
    if (config_.add_image_special_tokens) special({fake_image_token_, global_image_token_});
    auto img = vlm_with_expert->embed_image(in.images[i]);
    img = img * torch::scalar_tensor(std::sqrt(static_cast<double>(img.size(-1))), img.options());
    embs.push_back(img);
    pads.push_back(in.image_masks[i].unsqueeze(1).expand({b, img.size(1)}));
    att.insert(att.end(), img.size(1), 0);
    if (config_.add_image_special_tokens) special({fake_image_token_});
  }
  auto lang = vlm_with_expert->embed_language_tokens(in.tokens);
  lang = lang * std::sqrt(static_cast<double>(lang.size(-1)));
  embs.push_back(lang);
  pads.push_back(in.token_mask);
  att.insert(att.end(), lang.size(1), 0);
  auto state = linear(state_proj, in.state);
  if (state.dim() == 2) state = state.unsqueeze(1);
  embs.push_back(state);
  pads.push_back(torch::ones({b, state.size(1)}, torch::TensorOptions().dtype(torch::kBool).device(device)));
  att.insert(att.end(), state.size(1), 1);  // images and language do not attend to the state

  // The 0/1 blocks, made on the device from runs of equal values (no host-to-device copy).
  std::vector<torch::Tensor> runs;
  for (size_t i = 0; i < att.size();) {
    size_t j = i;
    while (j < att.size() && att[j] == att[i]) ++j;
    runs.push_back(torch::full({static_cast<int64_t>(j - i)}, att[i], torch::TensorOptions().dtype(torch::kInt64).device(device)));
    i = j;
  }
  Embedded e{torch::cat(embs, 1), torch::cat(pads, 1), torch::cat(runs).unsqueeze(0)};
  const int64_t len = e.pad_masks.size(1);
  if (len < config_.prefix_length) {
    const int64_t extra = config_.prefix_length - len;
    e.embs = F::pad(e.embs, F::PadFuncOptions({0, 0, 0, extra}));
    e.pad_masks = F::pad(e.pad_masks, F::PadFuncOptions({0, extra}));
    e.att_masks = F::pad(e.att_masks, F::PadFuncOptions({0, extra}));
  }
  e.att_masks = e.att_masks.expand({b, -1});
  return e;
}

VLAFlowMatchingImpl::Embedded VLAFlowMatchingImpl::embed_suffix(const torch::Tensor& noisy_actions,
                                                                const torch::Tensor& time) {
  auto action_emb = linear(action_in_proj, noisy_actions);  // (B, chunk, E)
  const int64_t b = action_emb.size(0), e = action_emb.size(2);
  auto time_emb = sinusoidal_time_embedding(time, e, config_.min_period, config_.max_period).to(action_emb.scalar_type());
  time_emb = time_emb.unsqueeze(1).expand_as(action_emb);
  auto x = linear(action_time_mlp_in, torch::cat({action_emb, time_emb}, 2));
  x = linear(action_time_mlp_out, torch::silu(x));
  auto opts = torch::TensorOptions().device(x.device());
  // Each action token starts a new attention block: the prefix does not attend to it.
  return {x, torch::ones({b, x.size(1)}, opts.dtype(torch::kBool)), torch::ones({b, config_.chunk_size}, opts.dtype(torch::kInt64))};
}

torch::Tensor VLAFlowMatchingImpl::forward(const VlaInputs& in, const torch::Tensor& actions, const torch::Tensor& noise,
                                           const torch::Tensor& time) {
  auto t = time.view({-1, 1, 1});
  auto x_t = t * noise + (1 - t) * actions;
  auto u_t = noise - actions;
  auto prefix = embed_prefix(in);
  auto suffix = embed_suffix(x_t, time);
  auto pad = torch::cat({prefix.pad_masks, suffix.pad_masks}, 1);
  auto att = torch::cat({prefix.att_masks, suffix.att_masks}, 1);
  auto positions = pad.to(torch::kInt64).cumsum(1) - 1;
  auto out = vlm_with_expert->forward_joint(prefix.embs, suffix.embs, make_att_2d_masks(pad, att), positions);
  out = out.narrow(1, out.size(1) - config_.chunk_size, config_.chunk_size).to(torch::kFloat);
  auto v_t = linear(action_out_proj, out);
  return F::mse_loss(u_t, v_t, F::MSELossFuncOptions().reduction(torch::kNone));
}

torch::Tensor VLAFlowMatchingImpl::denoise_step(const PrefixKv& kv, const torch::Tensor& prefix_pad,
                                                const torch::Tensor& x_t, const torch::Tensor& time) {
  auto suffix = embed_suffix(x_t, time);
  const int64_t b = prefix_pad.size(0), ls = suffix.pad_masks.size(1), lp = prefix_pad.size(1);
  auto prefix_2d = prefix_pad.unsqueeze(1).expand({b, ls, lp});
  auto mask = torch::cat({prefix_2d, make_att_2d_masks(suffix.pad_masks, suffix.att_masks)}, 2);
  auto offsets = prefix_pad.to(torch::kInt64).sum(-1, /*keepdim=*/true);
  auto positions = offsets + suffix.pad_masks.to(torch::kInt64).cumsum(1) - 1;
  auto out = vlm_with_expert->forward_suffix(kv, suffix.embs, mask, positions);
  out = out.narrow(1, out.size(1) - config_.chunk_size, config_.chunk_size).to(torch::kFloat);
  return linear(action_out_proj, out);
}

torch::Tensor VLAFlowMatchingImpl::sample_actions(const VlaInputs& in, const torch::Tensor& noise,
                                                  const VelocityGuide& guide) {
  auto prefix = embed_prefix(in);
  auto positions = prefix.pad_masks.to(torch::kInt64).cumsum(1) - 1;
  const PrefixKv kv = vlm_with_expert->prefill(prefix.embs, make_att_2d_masks(prefix.pad_masks, prefix.att_masks), positions);
  return euler_integrate(
      [&](const torch::Tensor& x_t, const torch::Tensor& time) { return denoise_step(kv, prefix.pad_masks, x_t, time); },
      noise, config_.num_steps, guide);
}

}  // namespace lerobot
