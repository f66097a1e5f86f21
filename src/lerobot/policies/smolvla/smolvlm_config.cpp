// Reads a SmolVLM config.json into SmolVLMArch (see smolvlm_config.h).
#include "lerobot/policies/smolvla/smolvlm_config.h"

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"

namespace lerobot {
namespace {

template <typename T>
void take(const Json& j, const char* key, T& out, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return;
  try {
    out = j.at(key).get<T>();
  } catch (const std::exception& e) {
    throw_checkpoint(std::string("'") + key + "' has the wrong type: " + e.what(), where);
  }
}

void check_positive(int64_t v, const char* key, const std::string& where) {
  if (v < 1) throw_checkpoint(std::string(key) + " must be >= 1, got " + std::to_string(v), where);
}

}  // namespace

int64_t SmolVLMArch::image_tokens() const {
  const int64_t side = vision.patches_per_side();
  return side * side / (scale_factor * scale_factor);
}

SmolVLMArch SmolVLMArch::from_folder(const std::filesystem::path& dir) {
  const auto path = dir / "config.json";
  const std::string where = path.string();
  if (!std::filesystem::exists(path))
    throw_checkpoint("the SmolVLA backbone folder has no config.json", where,
                     "pass --policy.vlm_model_name=<a Hub id or a folder with SmolVLM's config.json and tokenizer>");
  const Json j = load_json_or_yaml(path);
  const std::string model_type = j.value("model_type", "");
  if (model_type != "smolvlm" && model_type != "idefics3")
    throw_checkpoint("model_type is '" + model_type + "', not a SmolVLM backbone ('smolvlm')", where,
                     "point --policy.vlm_model_name at a SmolVLM model such as HuggingFaceTB/SmolVLM2-500M-Video-Instruct");
  SmolVLMArch a;
  take(j, "scale_factor", a.scale_factor, where);
  if (j.contains("vision_config")) {
    const Json& v = j.at("vision_config");
    const std::string w = where + ": vision_config";
    take(v, "hidden_size", a.vision.hidden_size, w);
    take(v, "intermediate_size", a.vision.intermediate_size, w);
    take(v, "num_hidden_layers", a.vision.num_hidden_layers, w);
    take(v, "num_attention_heads", a.vision.num_attention_heads, w);
    take(v, "num_channels", a.vision.num_channels, w);
    take(v, "image_size", a.vision.image_size, w);
    take(v, "patch_size", a.vision.patch_size, w);
    take(v, "layer_norm_eps", a.vision.layer_norm_eps, w);
    take(v, "hidden_act", a.vision.hidden_act, w);
  }
  if (!j.contains("text_config")) throw_checkpoint("no text_config", where);
  const Json& t = j.at("text_config");
  const std::string w = where + ": text_config";
  const std::string text_type = t.value("model_type", "llama");
  if (text_type != "llama")
    throw_checkpoint("text_config.model_type is '" + text_type + "'; SmolVLA's backbone is a Llama", w);
  take(t, "vocab_size", a.text.vocab_size, w);
  take(t, "hidden_size", a.text.hidden_size, w);
  take(t, "intermediate_size", a.text.intermediate_size, w);
  take(t, "num_hidden_layers", a.text.num_hidden_layers, w);
  take(t, "num_attention_heads", a.text.num_attention_heads, w);
  a.text.num_key_value_heads = a.text.num_attention_heads;
  take(t, "num_key_value_heads", a.text.num_key_value_heads, w);
  a.text.head_dim = a.text.hidden_size / std::max<int64_t>(1, a.text.num_attention_heads);
  take(t, "head_dim", a.text.head_dim, w);
  take(t, "rms_norm_eps", a.text.rms_norm_eps, w);
  take(t, "attention_bias", a.text.attention_bias, w);
  take(t, "mlp_bias", a.text.mlp_bias, w);
  take(t, "hidden_act", a.text.hidden_act, w);

  check_positive(a.scale_factor, "scale_factor", where);
  check_positive(a.vision.patch_size, "vision_config.patch_size", where);
  check_positive(a.vision.num_attention_heads, "vision_config.num_attention_heads", where);
  check_positive(a.text.num_attention_heads, "text_config.num_attention_heads", where);
  check_positive(a.text.num_key_value_heads, "text_config.num_key_value_heads", where);
  if (a.vision.image_size % a.vision.patch_size != 0 || a.vision.patches_per_side() % a.scale_factor != 0)
    throw_checkpoint("vision image_size " + std::to_string(a.vision.image_size) + " is not a multiple of patch_size " +
                         std::to_string(a.vision.patch_size) + " x scale_factor " + std::to_string(a.scale_factor),
                     where);
  if (a.vision.hidden_size % a.vision.num_attention_heads != 0)
    throw_checkpoint("vision hidden_size is not a multiple of num_attention_heads", where);
  if (a.text.num_attention_heads % a.text.num_key_value_heads != 0)
    throw_checkpoint("text num_attention_heads is not a multiple of num_key_value_heads", where);
  if (a.vision.hidden_act != "gelu_pytorch_tanh" && a.vision.hidden_act != "gelu")
    throw_checkpoint("vision hidden_act '" + a.vision.hidden_act + "' is not supported (gelu_pytorch_tanh, gelu)", where);
  if (a.text.hidden_act != "silu")
    throw_checkpoint("text hidden_act '" + a.text.hidden_act + "' is not supported (silu)", where);
  return a;
}

}  // namespace lerobot
