// ACT's transformer: encoder/decoder layers (post-norm by default, DETR style), the encoder and
// decoder stacks, and the fixed sinusoidal position embeddings (1-D table and 2-D image grid).
#pragma once

#include <torch/torch.h>

#include "lerobot/policies/act/attention.h"
#include "lerobot/policies/act/configuration_act.h"

namespace lerobot {

class ACTEncoderLayerImpl : public torch::nn::Module {
 public:
  explicit ACTEncoderLayerImpl(const ACTConfig& c);
  // x (S, B, D); pos_embed broadcastable to x or undefined; key_padding_mask (B, S) or undefined.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& pos_embed = {},
                        const torch::Tensor& key_padding_mask = {});

  PackedMultiheadAttention self_attn{nullptr};
  torch::nn::Linear linear1{nullptr}, linear2{nullptr};
  torch::nn::Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};

 private:
  bool pre_norm_;
  std::string activation_;
};
TORCH_MODULE(ACTEncoderLayer);

class ACTEncoderImpl : public torch::nn::Module {
 public:
  ACTEncoderImpl(const ACTConfig& c, bool is_vae_encoder);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& pos_embed = {},
                        const torch::Tensor& key_padding_mask = {});
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};  // only with pre_norm (LeRobot uses Identity otherwise)
};
TORCH_MODULE(ACTEncoder);

class ACTDecoderLayerImpl : public torch::nn::Module {
 public:
  explicit ACTDecoderLayerImpl(const ACTConfig& c);
  // x (chunk, B, D); encoder_out (S, B, D); decoder_pos (chunk, 1, D); encoder_pos (S, 1, D).
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& encoder_out, const torch::Tensor& decoder_pos,
                        const torch::Tensor& encoder_pos);

  PackedMultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  torch::nn::Linear linear1{nullptr}, linear2{nullptr};
  torch::nn::Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};

 private:
  bool pre_norm_;
  std::string activation_;
};
TORCH_MODULE(ACTDecoderLayer);

class ACTDecoderImpl : public torch::nn::Module {
 public:
  explicit ACTDecoderImpl(const ACTConfig& c);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& encoder_out, const torch::Tensor& decoder_pos,
                        const torch::Tensor& encoder_pos);
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(ACTDecoder);

// (num_positions, dim) table: angle pos / 10000^(2*floor(j/2)/dim), sin on even j, cos on odd j,
// computed in float64 and returned as float32.
torch::Tensor sinusoidal_pos_embedding_1d(int64_t num_positions, int64_t dim);

// DETR-style 2-D embedding for a (H, W) feature map with `dim` channels per axis: returns
// (1, 2*dim, H, W), channels = [y-part ‖ x-part]; positions 1..H (1..W) are normalized by
// (last + 1e-6) and scaled by 2π; channel i uses 10000^(2*floor(i/2)/dim), sin on even, cos on odd.
torch::Tensor sinusoidal_pos_embedding_2d(int64_t height, int64_t width, int64_t dim,
                                          const torch::TensorOptions& options = {});

}  // namespace lerobot
