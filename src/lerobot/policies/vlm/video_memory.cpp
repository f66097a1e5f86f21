// MEM's video encoder over a SigLIP tower (see video_memory.h).
#include "lerobot/policies/vlm/video_memory.h"

#include <cmath>
#include <limits>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/linear.h"

namespace lerobot {
namespace {

// softmax(q k^T / sqrt(d)) v over (N, heads, L, d), with an optional (N, 1, L, L) bool mask of the
// allowed keys.
torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& allowed) {
  if constexpr (compat::kHasFusedAttention) return compat::fused_attention(q, k, v, allowed, 0.0);
  auto w = torch::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(q.size(3)));
  if (allowed.defined()) w = w.masked_fill(allowed.logical_not(), std::numeric_limits<float>::lowest());
  return torch::matmul(torch::softmax(w, -1, torch::kFloat).to(q.scalar_type()), v);
}

// MEM's composed attention (its eq. 3) of layer `l` on normed (B, T, P, D) states: over frames per
// patch (masked by `allowed`, (B·P, 1, T, T)), then over patches per frame with those values, then
// out_proj. One frame makes the first softmax the identity: plain SigLIP attention.
torch::Tensor space_time_attention(const VisionTransformerImpl::Layer& l, int64_t heads, const torch::Tensor& h,
                                   const torch::Tensor& allowed) {
  const int64_t b = h.size(0), t = h.size(1), p = h.size(2), d = h.size(3), hd = d / heads;
  auto project = [&](const torch::nn::Linear& w) { return linear(w, h).view({b, t, p, heads, hd}); };
  auto q = project(l.q), k = project(l.k), v = project(l.v);
  auto over_frames = [&](const torch::Tensor& x) { return x.permute({0, 2, 3, 1, 4}).reshape({b * p, heads, t, hd}); };
  auto over_patches = [&](const torch::Tensor& x) { return x.permute({0, 1, 3, 2, 4}).reshape({b * t, heads, p, hd}); };
  auto mixed = attend(over_frames(q), over_frames(k), over_frames(v), allowed)
                   .reshape({b, p, heads, t, hd})
                   .permute({0, 3, 1, 2, 4});  // (B, T, P, heads, hd)
  auto a = attend(over_patches(q), over_patches(k), over_patches(mixed), {})
               .reshape({b, t, heads, p, hd})
               .permute({0, 1, 3, 2, 4})
               .reshape({b, t, p, d});
  return linear(l.out, a);
}

}  // namespace

torch::Tensor temporal_sinusoidal_embedding(int64_t frames, int64_t hidden, const torch::Device& device) {
  if (hidden % 2 != 0)
    throw_usage("MEM's temporal embedding needs an even vision width, got " + std::to_string(hidden),
                "policy.use_visual_memory", "use a vision tower of even width, or turn visual memory off");
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device);
  auto positions = torch::arange(1 - frames, 1, opts).unsqueeze(1);
  auto freqs = torch::exp(torch::arange(0, hidden, 2, opts) * (-std::log(10000.0) / static_cast<double>(hidden)));
  auto angles = positions * freqs.unsqueeze(0);  // (T, D/2)
  return torch::stack({torch::sin(angles), torch::cos(angles) - 1.0}, 2).reshape({frames, hidden});
}

torch::Tensor causal_temporal_allowed(const torch::Tensor& frame_mask) {
  const int64_t t = frame_mask.size(1);
  const auto opts = torch::TensorOptions().dtype(torch::kBool).device(frame_mask.device());
  auto allowed = torch::ones({t, t}, opts).tril().unsqueeze(0) & frame_mask.to(torch::kBool).unsqueeze(1);
  return allowed | torch::eye(t, opts).unsqueeze(0);
}

torch::Tensor encode_video_with_mem(VisionTransformerImpl& tower, const torch::Tensor& pixels,
                                    const torch::Tensor& frame_mask, int64_t every) {
  if (pixels.dim() != 5)
    throw_usage("MEM's video encoder takes (B, T, C, H, W) frames, got " + c10::str(pixels.sizes()), "policy.use_visual_memory");
  const int64_t b = pixels.size(0), t = pixels.size(1), depth = static_cast<int64_t>(tower.num_layers());
  if (frame_mask.dim() != 2 || frame_mask.size(0) != b || frame_mask.size(1) != t)
    throw_usage("MEM's frame mask must be (" + std::to_string(b) + ", " + std::to_string(t) + "), got " +
                    c10::str(frame_mask.sizes()),
                "<camera>_is_pad", "give one padding flag per frame of the camera's history");
  if (every < 1 || every > depth)
    throw_usage("memory_temporal_attention_every (" + std::to_string(every) + ") must be in [1, " + std::to_string(depth) +
                    "], the vision tower's depth",
                "policy.memory_temporal_attention_every");
  int64_t last_temporal = -1;
  if (t > 1)
    for (int64_t i = 0; i < depth; ++i)
      if ((i + 1) % every == 0) last_temporal = i;

  auto x = tower.embed(pixels.flatten(0, 1));  // (B·T, P, D)
  const int64_t p = x.size(1), d = x.size(2), heads = tower.arch().num_attention_heads;
  x = x.view({b, t, p, d});
  const auto positions = temporal_sinusoidal_embedding(t, d, x.device()).to(x.scalar_type()).view({1, t, 1, d});
  const auto allowed = causal_temporal_allowed(frame_mask.to(x.device())).unsqueeze(1).repeat_interleave(p, 0);
  for (int64_t i = 0; i < depth; ++i) {
    const int64_t frames = x.size(1);
    if (frames == 1 || (i + 1) % every != 0) {
      x = tower.plain_layer(i, x.reshape({b * frames, p, d})).view({b, frames, p, d});
      continue;
    }
    // The temporal position feeds q/k/v only; the residual stream stays the layer's input.
    x = tower.run_layer_unit(i, {x}, [&tower, i, heads, positions, allowed](const std::vector<torch::Tensor>& in) {
      auto layer = tower.layer(i);  // holders copied: forward is not const
      auto y = in[0] + space_time_attention(layer, heads, layer.ln1->forward(in[0] + positions), allowed);
      return std::vector<torch::Tensor>{y + tower.mlp(layer, layer.ln2->forward(y))};
    })[0];
    if (i == last_temporal) x = x.narrow(1, t - 1, 1);
  }
  return tower.final_norm(x.select(1, x.size(1) - 1));
}

}  // namespace lerobot
