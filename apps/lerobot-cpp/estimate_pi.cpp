// `lerobot-cpp estimate` for π0 / π0.5: their sizes and memory per process without building the
// model (the full-size one holds 4 B parameters, 16 GB in float32), in milliseconds on any
// machine. A training step is timed only where a GPU can run it.
#include <cstdio>
#include <string>

#include "estimate_pi.h"
#include "lerobot/policies/lora/lora_sizing.h"
#include "lerobot/policies/pi/pi_sizing.h"
#include "lerobot/policies/pi_config_base.h"

namespace lerobot::app {
namespace {

double gb(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

void print_pi_estimate(const PiConfigBase& config, int64_t batch, int64_t cameras, const lora::LoraSettings* lora) {
  const bool pi05 = config.type() == "pi05";
  const PaliGemmaArch arch = paligemma_arch(config);
  const PiSize size = pi_size(arch, pi05, config.max_state_dim, config.max_action_dim, config.freeze_vision_encoder,
                              config.train_expert_only, pi_proprio_memory(config));
  std::printf("policy %s: %s + %s, SigLIP So400m/14 at %lld px: %lld parameters (%.2f B), as LeRobot's %s builds it; "
              "%.2f B of them are the two lm_heads it builds and never reads\n",
              config.type().c_str(), config.paligemma_variant.c_str(), config.action_expert_variant.c_str(),
              static_cast<long long>(config.image_resolution.at(0)), static_cast<long long>(size.parameters()),
              size.parameters() / 1e9, pi05 ? "PI05Pytorch" : "PI0Pytorch", size.unread_parameters() / 1e9);
  for (const auto& p : size.parts)
    std::printf("  %-58s %14lld%s\n", p.name.c_str(), static_cast<long long>(p.parameters), p.trainable ? "" : "  (frozen)");
  const int64_t patches = arch.vision.patches_per_side() * arch.vision.patches_per_side();
  const int64_t prefix = cameras * patches + config.tokenizer_max_length;
  const int64_t suffix = config.chunk_size + (pi05 ? 0 : 1);
  const bool vision_trains = !config.freeze_vision_encoder && !config.train_expert_only;
  std::printf("memory per process at batch %lld, %lld camera(s) (a prefix of %lld tokens, a suffix of %lld), in GB:\n",
              static_cast<long long>(batch), static_cast<long long>(cameras), static_cast<long long>(prefix),
              static_cast<long long>(suffix));
  std::printf("  %-44s %10s %10s\n", "", "float32", "bfloat16");
  auto row = [](const char* what, double f32, double bf16) { std::printf("  %-44s %10.1f %10.1f\n", what, f32, bf16); };
  row("weights", gb(size.weight_bytes("float32")), gb(size.weight_bytes("bfloat16")));
  row("gradients", gb(size.gradient_bytes("float32")), gb(size.gradient_bytes("bfloat16")));
  row("AdamW state (two moments)", gb(size.optimizer_bytes("float32")), gb(size.optimizer_bytes("bfloat16")));
  auto held = [&](const std::string& dtype) {
    return size.weight_bytes(dtype) + size.gradient_bytes(dtype) + size.optimizer_bytes(dtype);
  };
  for (bool ckpt : {false, true}) {
    const auto f32 = pi_activation_bytes(arch, pi05, "float32", ckpt, cameras, prefix, suffix, vision_trains);
    const auto bf16 = pi_activation_bytes(arch, pi05, "bfloat16", ckpt, cameras, prefix, suffix, vision_trains);
    row(ckpt ? "activations, gradient_checkpointing=true (peak)" : "activations, gradient_checkpointing=false",
        gb(batch * f32.peak), gb(batch * bf16.peak));
    row(ckpt ? "total, gradient_checkpointing=true" : "total, gradient_checkpointing=false",
        gb(held("float32") + batch * f32.peak), gb(held("bfloat16") + batch * bf16.peak));
  }
  std::printf("(activations counted from this implementation's forward, checked against its heap at small sizes; "
              "CUDA's allocator and kernels' workspaces come on top)\n");
  if (lora) {
    // LeRobot's --peft.*: the base frozen, the adapters (float32, as PEFT keeps them) train.
    const lora::AdapterCount c =
        lora::count_adapters(lora::pi_linear_layers(arch, pi05, config.max_state_dim, config.max_action_dim), *lora);
    std::printf("LoRA r=%lld (lora_alpha %lld) on %lld modules: %lld trainable parameters (%.3f%% of %lld)%s; AdamW state "
                "%.1f MB against %.1f GB (float32) / %.1f GB (bfloat16) for the full fine-tune above; gradients %.1f MB; "
                "the activations stay about as above (backward still runs through the expert)\n",
                static_cast<long long>(lora->r), static_cast<long long>(lora->lora_alpha), static_cast<long long>(c.modules),
                static_cast<long long>(c.trainable()), 100.0 * c.trainable() / size.parameters(),
                static_cast<long long>(size.parameters()),
                c.saved ? (" (" + std::to_string(c.saved) + " of them in modules to save)").c_str() : "",
                c.adamw_bytes() / (1024.0 * 1024.0), gb(size.optimizer_bytes("float32")), gb(size.optimizer_bytes("bfloat16")),
                4.0 * c.trainable() / (1024.0 * 1024.0));
  }
}

}  // namespace lerobot::app
