// The SmolVLM backbone as transformers builds it, with its module names (so the state dict reads
// model.vlm_with_expert.vlm.model.{vision_model, connector, text_model}.* and vlm.lm_head, as in
// LeRobot's SmolVLA checkpoints): a SigLIP-style vision transformer, the pixel-shuffle connector,
// and Llama decoder layers. SmolVLA drives the Llama layers itself (smolvlm_with_expert), so they
// expose their parts rather than a forward.
#pragma once

#include <torch/torch.h>

#include "lerobot/policies/smolvla/smolvlm_config.h"
#include "lerobot/policies/vlm/decoder_layer.h"
#include "lerobot/policies/vlm/vision_transformer.h"

namespace lerobot {

// LlamaRMSNorm: x / sqrt(mean(x²) + eps) in float32, times the weight.
class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

class LlamaDecoderLayerImpl : public torch::nn::Module {
 public:
  LlamaDecoderLayerImpl(const LlamaArch& a, int64_t kv_in);
  DecoderAttention self_attn{nullptr};
  GatedMlp mlp{nullptr};
  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(LlamaDecoderLayer);

// LlamaModel: embed_tokens (absent in SmolVLA's expert), layers, norm. `kv_in[i]` is layer i's
// k/v input width (0: its own hidden size).
class LlamaModelImpl : public torch::nn::Module {
 public:
  LlamaModelImpl(const LlamaArch& a, bool with_embeddings, const std::vector<int64_t>& kv_in = {});
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers_list{nullptr};
  std::vector<LlamaDecoderLayer> layers;
  RmsNorm norm{nullptr};
};
TORCH_MODULE(LlamaModel);

// SmolVLMConnector: pixel shuffle by scale_factor, then modality_projection.proj (no bias).
class SmolVLMConnectorImpl : public torch::nn::Module {
 public:
  explicit SmolVLMConnectorImpl(const SmolVLMArch& a);
  torch::Tensor forward(const torch::Tensor& x);  // (B, S, C) -> (B, S/f², text hidden)

 private:
  int64_t scale_factor_;
  torch::nn::Linear proj_{nullptr};
};
TORCH_MODULE(SmolVLMConnector);

// SmolVLMForConditionalGeneration's modules: model.{vision_model, connector, text_model} and
// lm_head (kept for the state dict; SmolVLA never calls it). `text_layers` keeps the first
// layers of the text model only (SmolVLA's num_vlm_layers).
class SmolVLMImpl : public torch::nn::Module {
 public:
  SmolVLMImpl(const SmolVLMArch& a, int64_t text_layers);
  VisionTransformer vision_model{nullptr};
  SmolVLMConnector connector{nullptr};
  LlamaModel text_model{nullptr};
  torch::nn::Linear lm_head{nullptr};
};
TORCH_MODULE(SmolVLM);

// transformers' init of a model built from its config: Linear, Conv2d and Embedding weights
// N(0, std), biases 0, norms (1, 0).
void init_transformers_weights(torch::nn::Module& m, double std);

}  // namespace lerobot
