// Multi-head attention with torch.nn.MultiheadAttention's parameter names (packed
// in_proj_weight/in_proj_bias in q,k,v order, out_proj) and math, sequence-first layout.
#pragma once

#include <torch/torch.h>

namespace lerobot {

class PackedMultiheadAttentionImpl : public torch::nn::Module {
 public:
  PackedMultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads, double dropout);

  // query (Lq, B, D); key, value (Lk, B, D); key_padding_mask (B, Lk) bool, true = ignore that
  // key (undefined: none). Returns (Lq, B, D). Dropout acts on the attention weights in training.
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& key,
                        const torch::Tensor& value, const torch::Tensor& key_padding_mask = {});

  // torch's MultiheadAttention init: xavier_uniform in_proj_weight, zero biases.
  void reset_parameters();

  torch::Tensor in_proj_weight;  // (3D, D)
  torch::Tensor in_proj_bias;    // (3D)
  torch::nn::Linear out_proj{nullptr};

 private:
  int64_t embed_dim_;
  int64_t num_heads_;
  double dropout_;
};
TORCH_MODULE(PackedMultiheadAttention);

}  // namespace lerobot
