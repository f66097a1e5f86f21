// `lerobot-cpp estimate` for π0 / π0.5 (see estimate_pi.cpp).
#pragma once

#include <cstdint>

namespace lerobot {
class PiConfigBase;
namespace app {

// Prints the parameter count by part and the memory per process (weights, gradients, AdamW state,
// activations with and without gradient checkpointing, float32 and bfloat16) for `config`'s sizes.
void print_pi_estimate(const PiConfigBase& config, int64_t batch, int64_t cameras);

}  // namespace app
}  // namespace lerobot
