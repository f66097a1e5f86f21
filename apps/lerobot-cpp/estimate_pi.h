// `lerobot-cpp estimate` for π0 / π0.5 (see estimate_pi.cpp).
#pragma once

#include <cstdint>

namespace lerobot {
class PiConfigBase;
namespace lora {
struct LoraSettings;
}
namespace app {

// Prints the parameter count by part and the memory per process (weights, gradients, AdamW state,
// activations with and without gradient checkpointing, float32 and bfloat16) for `config`'s sizes;
// with `lora` (--peft.*), what its adapters train and their AdamW state against the full fine-tune's.
void print_pi_estimate(const PiConfigBase& config, int64_t batch, int64_t cameras,
                       const lora::LoraSettings* lora = nullptr);

}  // namespace app
}  // namespace lerobot
