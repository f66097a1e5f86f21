// π0 / π0.5 flow matching (see pi_flow_matching.h).
#include "lerobot/policies/pi/pi_flow_matching.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/activation_checkpoint.h"

namespace lerobot {
namespace {

namespace F = torch::nn::functional;

// The 0/1 attention-block markers of a sequence, made on the device from runs (no host copy).
torch::Tensor runs_of(const std::vector<std::pair<int64_t, int64_t>>& runs, const torch::Device& device) {
  std::vector<torch::Tensor> parts;
  for (auto [value, count] : runs)
    if (count > 0) parts.push_back(torch::full({count}, value, torch::TensorOptions().dtype(torch::kInt64).device(device)));
  return torch::cat(parts);
}

}  // namespace

PiFlowMatchingImpl::PiFlowMatchingImpl(const PiConfigBase& config, bool pi05, const PaliGemmaArch& arch,
                                       const PiMemory& memory)
    : chunk_size_(config.chunk_size),
      min_period_(config.min_period),
      max_period_(config.max_period),
      pi05_(pi05),
      memory_(memory) {
  if (config.image_resolution.size() != 2 || config.image_resolution[0] != config.image_resolution[1])
    throw_usage("PaliGemma takes square images", "policy.image_resolution", "pass two equal sizes, e.g. [224, 224]");
  paligemma_with_expert = register_module("paligemma_with_expert", PaliGemmaWithExpert(arch, pi05));
  const int64_t e = arch.expert.width;
  action_in_proj = register_module("action_in_proj", torch::nn::Linear(config.max_action_dim, e));
  action_out_proj = register_module("action_out_proj", torch::nn::Linear(e, config.max_action_dim));
  if (pi05) {
    time_mlp_in = register_module("time_mlp_in", torch::nn::Linear(e, e));
    time_mlp_out = register_module("time_mlp_out", torch::nn::Linear(e, e));
    if (memory.proprioceptive)
      proprio_history_proj =
          register_module("proprio_history_proj", torch::nn::Linear(config.max_state_dim, arch.text.width));
  } else {
    state_proj = register_module("state_proj", torch::nn::Linear(config.max_state_dim, e));
    action_time_mlp_in = register_module("action_time_mlp_in", torch::nn::Linear(2 * e, e));
    action_time_mlp_out = register_module("action_time_mlp_out", torch::nn::Linear(e, e));
  }
  paligemma_with_expert->set_precision(config.dtype);
  paligemma_with_expert->set_trainable(config.freeze_vision_encoder, config.train_expert_only);
  paligemma_with_expert->set_gradient_checkpointing(config.gradient_checkpointing);
}

PiFlowMatchingImpl::Embedded PiFlowMatchingImpl::embed_prefix(const PiInputs& in) {
  std::vector<torch::Tensor> embs, pads;
  int64_t length = 0;
  const int64_t b = in.tokens.size(0);
  auto& pwe = *paligemma_with_expert;
  // LeRobot's gradient checkpointing recomputes the vision tower and projector too (when they train).
  const bool recompute_vision = pwe.gradient_checkpointing() && is_training() && torch::GradMode::is_enabled() &&
                                pwe.projector->weight.requires_grad();
  const int64_t every = memory_.temporal_attention_every;
  for (size_t i = 0; i < in.images.size(); ++i) {
    const bool clip = in.images[i].dim() == 5;  // MEM: (B, T, 3, H, W) with a (B, T) frame mask
    auto mask = in.image_masks[i];
    UnitFn embed = [&pwe, clip, mask, every](const std::vector<torch::Tensor>& x) {
      return std::vector<torch::Tensor>{clip ? pwe.embed_video(x[0], mask, every) : pwe.embed_image(x[0])};
    };
    auto img = recompute_vision ? recompute_in_backward(embed, {in.images[i]}, false)[0] : embed({in.images[i]})[0];
    embs.push_back(img);
    auto current = clip ? mask.select(1, mask.size(1) - 1) : mask;  // the current frame's mask pads the tokens
    pads.push_back(current.unsqueeze(1).expand({b, img.size(1)}));
    length += img.size(1);
  }
  if (proprio_history_proj) {  // one token per remembered state, padded ones masked out
    if (!in.states.defined() || !in.state_masks.defined())
      throw_usage("π0.5's proprioceptive memory needs the state history and its mask", "policy.use_proprioceptive_memory");
    auto states = linear(proprio_history_proj, in.states.to(proprio_history_proj->weight.scalar_type()));
    embs.push_back(states);
    pads.push_back(in.state_masks.to(torch::kBool));
    length += states.size(1);
  }
  auto lang = paligemma_with_expert->embed_language_tokens(in.tokens);
  embs.push_back(lang.to(torch::kFloat));  // torch.cat promotes to the image embeddings' float32
  pads.push_back(in.token_mask);
  length += lang.size(1);
  Embedded e;
  e.embs = torch::cat(embs, 1);
  e.pad_masks = torch::cat(pads, 1);
  e.att_masks = torch::zeros({b, length}, torch::TensorOptions().dtype(torch::kInt64).device(e.embs.device()));
  return e;
}

PiFlowMatchingImpl::Embedded PiFlowMatchingImpl::embed_suffix(const torch::Tensor& state, const torch::Tensor& noisy_actions,
                                                              const torch::Tensor& time) {
  Embedded out;
  auto action_emb = linear(action_in_proj, noisy_actions);  // (B, chunk, E)
  const int64_t b = action_emb.size(0), e = action_emb.size(2);
  auto time_emb = sinusoidal_time_embedding(time, e, min_period_, max_period_).to(time.scalar_type());
  const auto device = action_emb.device();
  const auto bools = torch::TensorOptions().dtype(torch::kBool).device(device);
  if (pi05_) {
    auto cond = torch::silu(linear(time_mlp_out, torch::silu(linear(time_mlp_in, time_emb))));
    out.embs = action_emb;
    out.adarms_cond = cond;
    out.pad_masks = torch::ones({b, chunk_size_}, bools);
    out.att_masks = runs_of({{1, 1}, {0, chunk_size_ - 1}}, device).unsqueeze(0).expand({b, -1});
    return out;
  }
  auto state_emb = linear(state_proj, state.to(state_proj->weight.scalar_type()));
  auto x = torch::cat({action_emb, time_emb.unsqueeze(1).expand_as(action_emb)}, 2);
  x = linear(action_time_mlp_out, torch::silu(linear(action_time_mlp_in, x)));
  out.embs = torch::cat({state_emb.unsqueeze(1), x}, 1);
  out.pad_masks = torch::ones({b, chunk_size_ + 1}, bools);
  // Images, language and the state do not attend to the actions, nor the prefix to the state.
  out.att_masks = runs_of({{1, 2}, {0, chunk_size_ - 1}}, device).unsqueeze(0).expand({b, -1});
  return out;
}

torch::Tensor PiFlowMatchingImpl::forward(const PiInputs& in, const torch::Tensor& actions, const torch::Tensor& noise,
                                          const torch::Tensor& time, const torch::Tensor& prefix_mask) {
  torch::Tensor x_t, model_time = time;
  if (prefix_mask.defined()) {  // π0.5's trained RTC: the prefix stays clean (time 0)
    model_time = torch::where(prefix_mask, torch::zeros_like(time.unsqueeze(1).expand_as(prefix_mask)),
                              time.unsqueeze(1).expand_as(prefix_mask));
    auto t = model_time.unsqueeze(-1);
    x_t = t * noise + (1 - t) * actions;
  } else {
    auto t = time.view({-1, 1, 1});
    x_t = t * noise + (1 - t) * actions;
  }
  auto u_t = noise - actions;
  auto prefix = embed_prefix(in);
  auto suffix = embed_suffix(in.state, x_t, model_time);
  const auto dtype = paligemma_with_expert->compute_dtype();
  auto pad = torch::cat({prefix.pad_masks, suffix.pad_masks}, 1);
  auto att = torch::cat({prefix.att_masks, suffix.att_masks}, 1);
  auto positions = pad.to(torch::kInt64).cumsum(1) - 1;
  auto out = paligemma_with_expert->forward_joint(prefix.embs.to(dtype), suffix.embs.to(dtype),
                                                  make_att_2d_masks(pad, att), positions, suffix.adarms_cond);
  out = out.narrow(1, out.size(1) - chunk_size_, chunk_size_).to(torch::kFloat);
  auto v_t = linear(action_out_proj, out);
  return F::mse_loss(u_t, v_t, F::MSELossFuncOptions().reduction(torch::kNone));
}

torch::Tensor PiFlowMatchingImpl::denoise_step(const PrefixKv& kv, const torch::Tensor& prefix_pad,
                                               const torch::Tensor& state, const torch::Tensor& x_t,
                                               const torch::Tensor& time) {
  auto suffix = embed_suffix(state, x_t, time);
  const int64_t b = prefix_pad.size(0), ls = suffix.pad_masks.size(1), lp = prefix_pad.size(1);
  auto mask = torch::cat({prefix_pad.unsqueeze(1).expand({b, ls, lp}), make_att_2d_masks(suffix.pad_masks, suffix.att_masks)}, 2);
  auto positions = prefix_pad.to(torch::kInt64).sum(-1, /*keepdim=*/true) + suffix.pad_masks.to(torch::kInt64).cumsum(1) - 1;
  auto out = paligemma_with_expert->forward_suffix(kv, suffix.embs, mask, positions, suffix.adarms_cond);
  out = out.narrow(1, out.size(1) - chunk_size_, chunk_size_).to(torch::kFloat);
  return linear(action_out_proj, out);
}

torch::Tensor PiFlowMatchingImpl::sample_actions(const PiInputs& in, const torch::Tensor& noise, int64_t steps,
                                                 const VelocityGuide& guide, const torch::Tensor& hard_prefix,
                                                 const torch::Tensor& hard_prefix_mask) {
  auto prefix = embed_prefix(in);
  auto positions = prefix.pad_masks.to(torch::kInt64).cumsum(1) - 1;
  const PrefixKv kv =
      paligemma_with_expert->prefill(prefix.embs, make_att_2d_masks(prefix.pad_masks, prefix.att_masks), positions);
  return euler_integrate(
      [&](const torch::Tensor& x_t, const torch::Tensor& time) {
        return denoise_step(kv, prefix.pad_masks, in.state, x_t, time);
      },
      noise, steps, guide, hard_prefix, hard_prefix_mask);
}

}  // namespace lerobot
