// Decoder layer parts (see decoder_layer.h).
#include "lerobot/policies/vlm/decoder_layer.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/vlm/module_parts.h"

namespace lerobot {

DecoderAttentionImpl::DecoderAttentionImpl(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t head_dim_,
                                           bool bias, int64_t kv_in)
    : head_dim(head_dim_) {
  q_proj = register_module("q_proj", make_linear(hidden, heads * head_dim, bias));
  k_proj = register_module("k_proj", make_linear(kv_in, kv_heads * head_dim, bias));
  v_proj = register_module("v_proj", make_linear(kv_in, kv_heads * head_dim, bias));
  o_proj = register_module("o_proj", make_linear(heads * head_dim, hidden, bias));
}

GatedMlpImpl::GatedMlpImpl(int64_t hidden, int64_t intermediate, bool bias, const std::string& activation) {
  if (activation == "gelu_pytorch_tanh" || activation == "gelu_fast")
    gelu_tanh_ = true;
  else if (activation != "silu")
    throw_usage("the decoder MLP activation '" + activation + "' is not supported", "hidden_act",
                "use silu (Llama) or gelu_pytorch_tanh (Gemma)");
  gate_proj = register_module("gate_proj", make_linear(hidden, intermediate, bias));
  up_proj = register_module("up_proj", make_linear(hidden, intermediate, bias));
  down_proj = register_module("down_proj", make_linear(intermediate, hidden, bias));
}

torch::Tensor GatedMlpImpl::forward(const torch::Tensor& x) {
  auto gate = linear(gate_proj, x);
  gate = gelu_tanh_ ? torch::gelu(gate, "tanh") : torch::silu(gate);
  return linear(down_proj, gate * linear(up_proj, x));
}

}  // namespace lerobot
