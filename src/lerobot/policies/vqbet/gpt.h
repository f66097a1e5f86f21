// The minGPT of LeRobot's VQ-BeT (vqbet_utils.py, after Karpathy's nanoGPT), with its module
// names: transformer.{wte, wpe, drop, h.<i>.{ln_1, attn.{c_attn, c_proj, bias}, ln_2, mlp.{0, 2}},
// ln_f} and lm_head. A causal pre-norm transformer over a token sequence.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace lerobot {

class VQBeTConfig;

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  CausalSelfAttentionImpl(int64_t hidden, int64_t n_head, int64_t block_size, double dropout);
  torch::Tensor forward(const torch::Tensor& x);  // (B, T, C)
  torch::nn::Linear c_attn{nullptr}, c_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr}, resid_dropout{nullptr};
  torch::Tensor bias;  // (1, 1, block, block) lower-triangular ones: the causal mask

 private:
  int64_t n_head_, hidden_;
};
TORCH_MODULE(CausalSelfAttention);

class GptBlockImpl : public torch::nn::Module {
 public:
  GptBlockImpl(int64_t hidden, int64_t n_head, int64_t block_size, double dropout);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  torch::nn::Sequential mlp{nullptr};  // Linear(C, 4C), GELU, Linear(4C, C), Dropout
};
TORCH_MODULE(GptBlock);

// The `transformer` ModuleDict of the GPT.
class GptTransformerImpl : public torch::nn::Module {
 public:
  explicit GptTransformerImpl(const VQBeTConfig& c);
  torch::nn::Linear wte{nullptr};
  torch::nn::Embedding wpe{nullptr};
  torch::nn::Dropout drop{nullptr};
  torch::nn::ModuleList h{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
  std::vector<GptBlock> blocks;
};
TORCH_MODULE(GptTransformer);

class GptImpl : public torch::nn::Module {
 public:
  // nanoGPT's init: Linear and Embedding weights N(0, 0.02), biases 0, LayerNorm (1, 0), and the
  // residual projections (c_proj) N(0, 0.02 / sqrt(2 · n_layer)).
  explicit GptImpl(const VQBeTConfig& c);
  torch::Tensor forward(const torch::Tensor& input);  // (B, T, gpt_input_dim) -> (B, T, gpt_output_dim)
  // configure_parameters: Linear weights decay; biases, LayerNorm and Embedding weights do not.
  // Each list is sorted by name (relative to the GPT), as LeRobot sorts them.
  void split_decay(std::vector<torch::Tensor>& decay, std::vector<std::string>& decay_names,
                   std::vector<torch::Tensor>& no_decay, std::vector<std::string>& no_decay_names);
  GptTransformer transformer{nullptr};
  torch::nn::Linear lm_head{nullptr};

 private:
  int64_t block_size_;
};
TORCH_MODULE(Gpt);

}  // namespace lerobot
