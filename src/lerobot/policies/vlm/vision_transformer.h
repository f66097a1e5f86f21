// A SigLIP-style vision transformer with transformers' module names (embeddings.{patch_embedding,
// position_embedding}, encoder.layers.N.{self_attn.{q,k,v,out}_proj, layer_norm1, layer_norm2,
// mlp.fc1, mlp.fc2}, post_layernorm): patch embedding plus learned positions, pre-norm encoder
// layers, a final LayerNorm; (B, 3, H, W) in [-1, 1] -> (B, patches, hidden). SmolVLM's tower
// (SmolVLA) and PaliGemma's SigLIP So400m (π0, π0.5) are both this. Positions follow SmolVLM's
// fractional bucketing, which for an image of the configured size is SigLIP's 0..patches-1.
#pragma once

#include <torch/torch.h>

#include "lerobot/policies/unit_runner.h"
#include "lerobot/policies/vlm/vision_arch.h"

namespace lerobot {

class VisionTransformerImpl : public torch::nn::Module {
 public:
  explicit VisionTransformerImpl(const VisionTransformerArch& a);
  torch::Tensor forward(const torch::Tensor& pixels);
  // Recompute each encoder layer in the backward pass (transformers' gradient checkpointing of
  // the SigLIP encoder) instead of keeping its activations.
  void set_gradient_checkpointing(bool on) { checkpointing_ = on; }
  // Encoder layer i (encoder.layers.i): a unit, run through run_unit (unit_runner.h).
  torch::nn::Module* layer_module(size_t i) const { return layers_.at(i).module.get(); }
  size_t num_layers() const { return layers_.size(); }

  // The pieces another encoder of these weights runs (MEM's video encoder, video_memory.h):
  struct Layer {
    torch::nn::Linear k, v, q, out, fc1, fc2;
    torch::nn::LayerNorm ln1, ln2;
    std::shared_ptr<torch::nn::Module> module;  // encoder.layers.N, holding the above
  };
  const Layer& layer(size_t i) const { return layers_.at(i); }
  const VisionTransformerArch& arch() const { return arch_; }
  torch::Tensor embed(const torch::Tensor& pixels);            // patches plus positions: (B, P, D)
  torch::Tensor plain_layer(size_t i, const torch::Tensor& x);  // layer i on (N, P, D), as forward runs it
  // `fn` as layer i's unit (run_unit; recomputed in backward when checkpointing is on).
  std::vector<torch::Tensor> run_layer_unit(size_t i, const std::vector<torch::Tensor>& inputs, UnitFn fn);
  torch::Tensor mlp(const Layer& l, const torch::Tensor& x);  // fc2(gelu(fc1(x)))
  torch::Tensor final_norm(const torch::Tensor& x) { return post_layernorm_->forward(x); }

 private:
  torch::Tensor position_ids(int64_t patches_h, int64_t patches_w, const torch::Device& device);
  VisionTransformerArch arch_;
  torch::nn::Conv2d patch_embedding_{nullptr};
  torch::nn::Embedding position_embedding_{nullptr};
  std::vector<Layer> layers_;
  torch::Tensor run_layer(Layer& l, const torch::Tensor& x);
  bool checkpointing_ = false;
  torch::nn::LayerNorm post_layernorm_{nullptr};
  torch::Tensor cached_positions_;  // (patches,) int64 for the last size seen
  int64_t cached_h_ = -1, cached_w_ = -1;
};
TORCH_MODULE(VisionTransformer);

}  // namespace lerobot
