// Multi-head attention with torch.nn.MultiheadAttention's parameter names (packed
// in_proj_weight/in_proj_bias in q,k,v order, out_proj) and math, sequence-first layout.
#pragma once

#include <torch/torch.h>

namespace lerobot {

// How the attention weights are formed and applied:
//  - kFused: one at::scaled_dot_product_attention (LibTorch 2.0+; the default there): one operator
//    and one backward node, a flash or memory-efficient kernel on CUDA.
//  - kComposite: scale, bmm, mask, softmax, dropout, bmm (the only choice on 1.13), as
//    torch.nn.MultiheadAttention computes it when it returns the weights (LeRobot's case).
// Same parameters and math; dropout draws differ. Process-wide; benches and tests switch it.
enum class AttentionKernel { kFused, kComposite };
AttentionKernel attention_kernel();
// Throws for kFused where the LibTorch has no fused attention.
void set_attention_kernel(AttentionKernel kernel);

// Sets the kernel for a scope (a test) and restores the previous one when it ends.
class AttentionKernelScope {
 public:
  explicit AttentionKernelScope(AttentionKernel kernel) { set_attention_kernel(kernel); }
  ~AttentionKernelScope() { set_attention_kernel(saved_); }
  AttentionKernelScope(const AttentionKernelScope&) = delete;
  AttentionKernelScope& operator=(const AttentionKernelScope&) = delete;

 private:
  AttentionKernel saved_ = attention_kernel();
};

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
