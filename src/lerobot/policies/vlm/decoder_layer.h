// The parts of a decoder layer the VLA language models share, with transformers' module names:
// the attention projections (self_attn.{q,k,v,o}_proj) and the gated MLP
// (mlp.{gate,up,down}_proj). Llama (SmolVLA) and Gemma (π0, π0.5) layers differ only in the
// MLP's activation and in their RMS norms, which each keeps.
#pragma once

#include <torch/torch.h>

#include <string>

namespace lerobot {

// q/k/v/o projections for `heads` query heads and `kv_heads` key/value heads of head_dim. `kv_in`
// is the input width of k_proj and v_proj: the layer's own width, or (in SmolVLA's
// cross-attention expert layers) the VLM's key/value width.
class DecoderAttentionImpl : public torch::nn::Module {
 public:
  DecoderAttentionImpl(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t head_dim, bool bias, int64_t kv_in);
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  int64_t head_dim;
};
TORCH_MODULE(DecoderAttention);

// down(act(gate(x)) · up(x)); act is transformers' hidden_act: "silu" (Llama) or
// "gelu_pytorch_tanh" (Gemma).
class GatedMlpImpl : public torch::nn::Module {
 public:
  GatedMlpImpl(int64_t hidden, int64_t intermediate, bool bias, const std::string& activation);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};

 private:
  bool gelu_tanh_ = false;
};
TORCH_MODULE(GatedMlp);

}  // namespace lerobot
