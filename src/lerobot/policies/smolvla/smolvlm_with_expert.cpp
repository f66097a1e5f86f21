// The VLM and its action expert, layer by layer (see smolvlm_with_expert.h and LeRobot's
// smolvlm_with_expert.py).
#include "lerobot/policies/smolvla/smolvlm_with_expert.h"

#include <limits>

#include "lerobot/common/error.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/unit_runner.h"
#include "lerobot/policies/vlm/attention.h"

namespace lerobot {
namespace {

using torch::indexing::None;
using torch::indexing::Slice;

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

void set_requires_grad(torch::nn::Module& m, bool on) {
  for (auto& p : m.parameters()) p.set_requires_grad(on);
}

}  // namespace

int64_t expert_intermediate_size(int64_t hidden, int64_t ffn_dim_multiplier, int64_t multiple_of) {
  auto h = static_cast<int64_t>(2.0 * static_cast<double>(hidden) / 3.0);
  h = ffn_dim_multiplier * h;
  return multiple_of * ((h + multiple_of - 1) / multiple_of);
}

SmolVLMWithExpertImpl::SmolVLMWithExpertImpl(const SmolVLMArch& arch, const SmolVLMWithExpertOptions& o)
    : arch_(arch), options_(o) {
  num_vlm_layers_ = o.num_vlm_layers > 0 ? std::min(o.num_vlm_layers, arch.text.num_hidden_layers)
                                         : arch.text.num_hidden_layers;
  vlm = register_module("vlm", SmolVLM(arch, num_vlm_layers_));
  expert_arch_ = arch.text;
  const auto width = static_cast<int64_t>(static_cast<double>(arch.text.hidden_size) * o.expert_width_multiplier);
  expert_arch_.hidden_size = width;
  expert_arch_.intermediate_size = expert_intermediate_size(width);
  expert_arch_.num_hidden_layers = num_vlm_layers_;
  if (o.num_expert_layers > 0) {
    if (num_vlm_layers_ % o.num_expert_layers != 0)
      throw_usage("the VLM's " + std::to_string(num_vlm_layers_) + " layers are not a multiple of num_expert_layers " +
                      std::to_string(o.num_expert_layers),
                  "policy.num_expert_layers", "pass a divisor of policy.num_vlm_layers");
    expert_arch_.num_hidden_layers = o.num_expert_layers;
  }
  num_expert_layers_ = expert_arch_.num_hidden_layers;
  std::vector<int64_t> kv_in(num_expert_layers_, 0);
  if (contains(o.attention_mode, "cross"))
    for (int64_t i = 0; i < num_expert_layers_; ++i)
      if (!(o.self_attn_every_n_layers > 0 && i % o.self_attn_every_n_layers == 0))
        kv_in[i] = arch.text.num_key_value_heads * arch.text.head_dim;
  lm_expert = register_module("lm_expert", LlamaModel(expert_arch_, /*with_embeddings=*/false, kv_in));

  // Refuse the layouts LeRobot's own code cannot run: a self-attention layer whose expert layer
  // was given cross-attention projections, or one with no expert layer (its denoising step
  // concatenates nothing).
  for (int64_t i = 0; i < num_vlm_layers_; ++i) {
    const int64_t e = expert_layer_for(i);
    if (is_cross_layer(i)) continue;
    if (e < 0 || kv_in[e] > 0)
      throw_usage("with " + std::to_string(num_vlm_layers_) + " VLM layers, " + std::to_string(num_expert_layers_) +
                      " expert layers and self-attention every " + std::to_string(o.self_attn_every_n_layers) +
                      " layers, VLM layer " + std::to_string(i) +
                      " self-attends without a matching expert layer (LeRobot fails on it too)",
                  "policy.self_attn_every_n_layers",
                  "use an expert as deep as the VLM (policy.num_expert_layers=-1) or a self_attn_every_n_layers that "
                  "is a multiple of num_vlm_layers / num_expert_layers");
  }
}

int64_t SmolVLMWithExpertImpl::expert_layer_for(int64_t i) const {
  const int64_t multiple_of = num_vlm_layers_ / num_expert_layers_;
  if (multiple_of > 0 && i > 0 && i % multiple_of != 0) return -1;
  return multiple_of > 0 ? i / multiple_of : i;
}

bool SmolVLMWithExpertImpl::is_cross_layer(int64_t i) const {
  if (!contains(options_.attention_mode, "cross")) return false;
  return !(options_.self_attn_every_n_layers > 0 && i % options_.self_attn_every_n_layers == 0);
}

torch::Tensor SmolVLMWithExpertImpl::embed_image(const torch::Tensor& pixels) {
  const auto dtype = vlm->text_model->embed_tokens->weight.scalar_type();
  return vlm->connector->forward(vlm->vision_model->forward(pixels.to(dtype)));
}

torch::Tensor SmolVLMWithExpertImpl::embed_language_tokens(const torch::Tensor& tokens) {
  return vlm->text_model->embed_tokens->forward(tokens);
}

SmolVLMWithExpertImpl::Qkv SmolVLMWithExpertImpl::project(LlamaDecoderLayer& layer, const torch::Tensor& normed) const {
  auto& a = *layer->self_attn;
  const int64_t b = normed.size(0), l = normed.size(1);
  const auto h = normed.to(a.q_proj->weight.scalar_type());  // a bfloat16 layer computes in bfloat16
  return {linear(a.q_proj, h).view({b, l, -1, a.head_dim}), linear(a.k_proj, h).view({b, l, -1, a.head_dim}),
          linear(a.v_proj, h).view({b, l, -1, a.head_dim})};
}

torch::Tensor SmolVLMWithExpertImpl::attention(const torch::Tensor& blocked, const torch::Tensor& q,
                                               const torch::Tensor& k, const torch::Tensor& v) const {
  return eager_attention(q, k, v, blocked, ScorePrecision::kFloat32, std::numeric_limits<float>::lowest());
}

torch::Tensor SmolVLMWithExpertImpl::finish_layer(LlamaDecoderLayer& layer, const torch::Tensor& att,
                                                  const torch::Tensor& input) {
  // In place, as LeRobot adds the residuals: the sum keeps the layer's dtype (bfloat16 layers turn
  // a float32 input into bfloat16 here).
  auto out = linear(layer->self_attn->o_proj, att.to(layer->self_attn->o_proj->weight.scalar_type()));
  out.add_(input);
  // LeRobot clones the residual before the MLP; nothing writes to it here, so no copy is needed.
  auto mlp_out = layer->mlp->forward(layer->post_attention_layernorm->forward(out));
  mlp_out.add_(out);
  return mlp_out;
}

torch::Tensor SmolVLMWithExpertImpl::expert_cross(LlamaDecoderLayer& layer, const torch::Tensor& suffix,
                                                  const torch::Tensor& vlm_k, const torch::Tensor& vlm_v,
                                                  const torch::Tensor& blocked, const RopeTable& rope) {
  auto& a = *layer->self_attn;
  const int64_t b = suffix.size(0), ls = suffix.size(1), lp = vlm_k.size(1);
  auto normed = layer->input_layernorm->forward(suffix).to(a.q_proj->weight.scalar_type());
  auto q = linear(a.q_proj, normed).view({b, ls, -1, a.head_dim});
  auto k = linear(a.k_proj, vlm_k.to(a.k_proj->weight.scalar_type()).reshape({b, lp, -1})).view({b, lp, -1, a.head_dim});
  auto v = linear(a.v_proj, vlm_v.to(a.v_proj->weight.scalar_type()).reshape({b, lp, -1})).view({b, lp, -1, a.head_dim});
  return attention(blocked, apply_rope(q, rope), k, v);
}

RopeTable SmolVLMWithExpertImpl::expert_rope(const torch::Tensor& suffix_positions) const {
  return rope_table(suffix_positions - std::get<0>(suffix_positions.min(1, /*keepdim=*/true)), arch_.text.head_dim);
}

torch::Tensor SmolVLMWithExpertImpl::forward_joint(const torch::Tensor& prefix, const torch::Tensor& suffix,
                                                   const torch::Tensor& mask, const torch::Tensor& positions) {
  const int64_t lp = prefix.size(1), ls = suffix.size(1);
  const auto blocked = mask.logical_not();
  const RopeTable rope = rope_table(positions, arch_.text.head_dim);
  const RopeTable expert_pos = expert_rope(positions.narrow(1, lp, ls));
  std::vector<torch::Tensor> x = {prefix, suffix};
  for (int64_t i = 0; i < num_vlm_layers_; ++i) {
    // VLM layer i with its expert layer is one unit (run_unit, keyed by the VLM layer); by value:
    // a checkpointed layer runs again in the backward pass, after this frame is gone.
    auto joint = [this, i, blocked, rope, expert_pos, lp, ls](const std::vector<torch::Tensor>& in) {
      auto p = in[0], s = in[1];
      auto& vlm_layer = vlm->text_model->layers[i];
      const int64_t e = expert_layer_for(i);
      LlamaDecoderLayer* expert = e >= 0 ? &lm_expert->layers[e] : nullptr;
      auto pq = project(vlm_layer, vlm_layer->input_layernorm->forward(p));
      if (!is_cross_layer(i)) {
        auto q = pq.q, k = pq.k, v = pq.v;
        if (expert) {
          auto sq = project(*expert, (*expert)->input_layernorm->forward(s));
          q = torch::cat({q, sq.q}, 1), k = torch::cat({k, sq.k}, 1), v = torch::cat({v, sq.v}, 1);
        }
        const int64_t len = q.size(1);
        const RopeTable r = rope.narrow(0, len);
        auto att = attention(blocked.index({Slice(), Slice(0, len), Slice(0, len)}), apply_rope(q, r), apply_rope(k, r), v);
        auto new_p = finish_layer(vlm_layer, att.narrow(1, 0, lp), p);
        if (expert) s = finish_layer(*expert, att.narrow(1, lp, ls), s);
        p = new_p;
      } else {
        const RopeTable r = rope.narrow(0, lp);
        auto k = apply_rope(pq.k, r);
        auto att = attention(blocked.index({Slice(), Slice(0, lp), Slice(0, lp)}), apply_rope(pq.q, r), k, pq.v);
        if (expert)
          s = finish_layer(*expert,
                           expert_cross(*expert, s, k, pq.v, blocked.index({Slice(), Slice(lp, None), Slice(0, lp)}), expert_pos),
                           s);
        p = finish_layer(vlm_layer, att, p);
      }
      return std::vector<torch::Tensor>{p, s};
    };
    x = run_unit(*vlm->text_model->layers[i], x, joint);
  }
  return lm_expert->norm->forward(x[1]);
}

PrefixKv SmolVLMWithExpertImpl::prefill(const torch::Tensor& prefix, const torch::Tensor& mask,
                                        const torch::Tensor& positions) {
  PrefixKv kv;
  const auto blocked = mask.logical_not();
  const RopeTable rope = rope_table(positions, arch_.text.head_dim);
  auto p = prefix;
  for (int64_t i = 0; i < num_vlm_layers_; ++i) {
    auto& layer = vlm->text_model->layers[i];
    auto pq = project(layer, layer->input_layernorm->forward(p));
    auto k = apply_rope(pq.k, rope);
    kv.keys.push_back(k);
    kv.values.push_back(pq.v);
    if (i + 1 == num_vlm_layers_) break;  // the last layer's output is never read
    p = finish_layer(layer, attention(blocked, apply_rope(pq.q, rope), k, pq.v), p);
  }
  return kv;
}

torch::Tensor SmolVLMWithExpertImpl::forward_suffix(const PrefixKv& kv, const torch::Tensor& suffix,
                                                    const torch::Tensor& mask, const torch::Tensor& positions) {
  auto s = suffix;
  const auto blocked = mask.logical_not();
  const RopeTable rope = rope_table(positions, arch_.text.head_dim);
  const RopeTable expert_pos = expert_rope(positions);
  for (int64_t i = 0; i < num_vlm_layers_; ++i) {
    const int64_t e = expert_layer_for(i);
    if (e < 0) continue;  // a VLM layer with no expert layer leaves the suffix as it is
    auto& layer = lm_expert->layers[e];
    const int64_t lp = kv.keys[i].size(1);
    torch::Tensor att;
    if (!is_cross_layer(i)) {
      auto sq = project(layer, layer->input_layernorm->forward(s));
      att = attention(blocked, apply_rope(sq.q, rope), torch::cat({kv.keys[i], apply_rope(sq.k, rope)}, 1),
                      torch::cat({kv.values[i], sq.v}, 1));
    } else {
      att = expert_cross(layer, s, kv.keys[i], kv.values[i], blocked.narrow(2, 0, lp), expert_pos);
    }
    s = finish_layer(layer, att, s);
  }
  return lm_expert->norm->forward(s);
}

void SmolVLMWithExpertImpl::use_bfloat16_backbone() {
  vlm->to(torch::kBFloat16);
  lm_expert->to(torch::kBFloat16);
  for (int64_t i = 0; i < num_vlm_layers_; ++i) {  // the cross-attention k/v projections LeRobot adds later
    const int64_t e = expert_layer_for(i);
    if (e < 0 || !is_cross_layer(i)) continue;
    lm_expert->layers[e]->self_attn->k_proj->to(torch::kFloat);
    lm_expert->layers[e]->self_attn->v_proj->to(torch::kFloat);
  }
}

void SmolVLMWithExpertImpl::set_trainable(bool freeze_vision_encoder, bool train_expert_only) {
  if (freeze_vision_encoder) set_requires_grad(*vlm->vision_model, false);
  if (train_expert_only) {
    set_requires_grad(*vlm, false);
    return;
  }
  // LeRobot freezes what gets no gradient, so that DDP finds no unused parameters.
  std::vector<int64_t> last = {num_vlm_layers_ - 1};
  if (num_vlm_layers_ != num_expert_layers_ && num_vlm_layers_ % num_expert_layers_ == 0)
    last.push_back(num_vlm_layers_ - 2);
  set_requires_grad(*vlm->lm_head, false);
  vlm->text_model->norm->weight.set_requires_grad(false);
  for (int64_t l : last)
    if (l >= 0) set_requires_grad(*vlm->text_model->layers[l], false);
}

}  // namespace lerobot
