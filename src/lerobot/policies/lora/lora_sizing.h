// LoRA's size without building a model: which Linear layers a policy has (name as the module tree
// names it, in and out features), and what LoRA settings add to them — the adapters' parameters
// (r · (in + out) per target, PEFT's lora_A + lora_B) and AdamW's state for them (float32, as PEFT
// keeps adapters). `lerobot-cpp estimate --peft.*` prints it for π0/π0.5 at full size; for a built
// policy `linear_layers` reads the same list off the module tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "lerobot/policies/lora/lora_linear.h"

namespace lerobot {
struct PaliGemmaArch;
}

namespace lerobot::lora {

struct LinearShape {
  std::string name;  // e.g. "model.action_in_proj"
  int64_t in = 0, out = 0;
  bool bias = true;
  bool operator==(const LinearShape& o) const { return name == o.name && in == o.in && out == o.out && bias == o.bias; }
};

struct AdapterCount {
  int64_t modules = 0;     // targets
  int64_t parameters = 0;  // their lora_A and lora_B
  int64_t saved = 0;       // parameters of the Linear layers under modules_to_save (trained in full)
  int64_t trainable() const { return parameters + saved; }
  int64_t adamw_bytes() const { return 2 * 4 * trainable(); }  // two float32 moments each
};

// What `s` adds to `linears` (targets as is_target decides, modules to save as is_module_to_save).
AdapterCount count_adapters(const std::vector<LinearShape>& linears, const LoraSettings& s);

// Every Linear under `root`, sorted by name.
std::vector<LinearShape> linear_layers(torch::nn::Module& root);

// Every Linear of PiPolicy at `arch` (π0.5: adaRMS expert norms, time MLP; π0: state projection,
// action-time MLP), named as its module tree names them, sorted by name; tests hold it to the built
// model's linear_layers at small sizes.
std::vector<LinearShape> pi_linear_layers(const PaliGemmaArch& arch, bool pi05, int64_t max_state_dim,
                                          int64_t max_action_dim);

}  // namespace lerobot::lora
