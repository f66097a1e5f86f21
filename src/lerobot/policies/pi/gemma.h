// LeRobot's PiGemma (policies/pi_gemma.py) on transformers' Gemma: the decoder layers of
// PaliGemma's language model and of π0/π0.5's action expert, with transformers' module names
// (self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj, input_layernorm, post_attention_layernorm;
// the model's embed_tokens, layers, norm). Their RMS norm is Gemma's x · (1 + w), or with adaRMS
// (π0.5's expert) a per-sample scale, shift and residual gate from a condition vector.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "lerobot/policies/vlm/decoder_layer.h"

namespace lerobot {

// openpi's Gemma sizes (LeRobot's get_gemma_config), plus the vocabulary and norm epsilon
// transformers' GemmaConfig gives them.
struct GemmaArch {
  int64_t width = 0, depth = 0, mlp_dim = 0, num_heads = 8, num_kv_heads = 1, head_dim = 256;
  int64_t vocab_size = 257152;
  double rms_norm_eps = 1e-6;
};
// "gemma_2b" or "gemma_300m"; anything else is refused naming `flag`.
GemmaArch gemma_variant(const std::string& variant, const std::string& flag);

// PiGemmaRMSNorm. Without a condition width: x / rms(x) · (1 + weight), computed in float32 and
// returned in x's dtype. With one (adaRMS): dense(cond) -> scale, shift, gate;
// x / rms(x) · (1 + scale) + shift, and the gate for the residual.
class PiGemmaRmsNormImpl : public torch::nn::Module {
 public:
  PiGemmaRmsNormImpl(int64_t dim, double eps, int64_t cond_dim = 0);
  // (normed, gate); the gate is undefined without adaRMS. cond (B, cond_dim) or (B, L, cond_dim).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x, const torch::Tensor& cond = {});
  bool adaptive() const { return dense.get() != nullptr; }
  torch::Tensor weight;
  torch::nn::Linear dense{nullptr};

 private:
  double eps_;
};
TORCH_MODULE(PiGemmaRmsNorm);

// LeRobot's _gated_residual: x + y, or x + y · gate.
torch::Tensor gated_residual(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& gate);

class GemmaDecoderLayerImpl : public torch::nn::Module {
 public:
  GemmaDecoderLayerImpl(const GemmaArch& a, int64_t adarms_cond_dim);
  DecoderAttention self_attn{nullptr};
  GatedMlp mlp{nullptr};
  PiGemmaRmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(GemmaDecoderLayer);

// PiGemmaModel: embed_tokens (transformers' GemmaScaledWordEmbedding: rows times sqrt(width) in
// the weight's dtype; absent in the action expert), layers, norm.
class GemmaModelImpl : public torch::nn::Module {
 public:
  GemmaModelImpl(const GemmaArch& a, bool with_embeddings, int64_t adarms_cond_dim);
  torch::Tensor embed(const torch::Tensor& tokens);
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers_list{nullptr};
  std::vector<GemmaDecoderLayer> layers;
  PiGemmaRmsNorm norm{nullptr};
  GemmaArch arch;
};
TORCH_MODULE(GemmaModel);

}  // namespace lerobot
