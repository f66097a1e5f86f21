// LoRA on Linear layers as PEFT's LoraModel does it (peft.tuners.lora, method LORA): a target
// Linear keeps its weight and bias, frozen, and gains two adapter layers, lora_A (in -> r, no bias)
// and lora_B (r -> out, no bias), registered as its children so their parameters are named
// `<module>.lora_A.weight` / `<module>.lora_B.weight` (PEFT's saved names less the
// `base_model.model.` prefix). Every lerobot::linear(layer, x) call (policies/linear.h) then returns
//   base(x) + lora_B(lora_A(dropout(x))) * lora_alpha / r
// with x cast to the adapters' dtype (float32, as PEFT's autocast_adapter_dtype) and the sum cast back.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

namespace lerobot::lora {

// Which modules get adapters and how: PEFT's LoraConfig fields that LeRobot sets.
struct LoraSettings {
  // PEFT's target_modules: a string is a regular expression matched against the whole module name
  // (re.fullmatch), except "all-linear"; a list matches a name equal to an entry or ending in
  // "." + entry.
  std::optional<std::string> target_regex;
  std::vector<std::string> target_names;
  std::vector<std::string> modules_to_save;  // trained in full, saved beside the adapters
  int64_t r = 8;                              // PEFT's default; LeRobot passes its own (16)
  int64_t lora_alpha = 8;                     // PEFT's default when LeRobot's lora_alpha is null
  double lora_dropout = 0.0;
  std::string init_lora_weights = "true";     // "true" | "false" | "gaussian"
  double scaling() const { return static_cast<double>(lora_alpha) / static_cast<double>(r); }
};

// Whether `name` is a target (PEFT's check_target_module_exists without layers_to_transform):
// names under a module to save are never targets.
bool is_target(const LoraSettings& s, const std::string& name);
bool is_module_to_save(const LoraSettings& s, const std::string& name);

// Adds adapters to every target Linear under root (module names relative to root), initialised as
// PEFT's init_lora_weights says, on each base weight's device. Refuses a target that is not a
// Linear, and settings that match nothing. A target that already carries adapters of rank r
// (loaded from an adapter checkpoint) keeps them. Returns the targeted names, sorted.
std::vector<std::string> inject(torch::nn::Module& root, const LoraSettings& s);

// requires_grad false for every parameter but the adapters and those of the modules to save
// (LeRobot's wrap_with_peft freezes the policy, get_peft_model unfreezes those).
void freeze_base(torch::nn::Module& root, const LoraSettings& s);

// The adapter tensors and those of the modules to save under PEFT's saved names
// (`base_model.model.<parameter name>`), as adapter_model.safetensors holds them.
std::vector<std::pair<std::string, torch::Tensor>> adapter_tensors(torch::nn::Module& root, const LoraSettings& s);

// Copies adapter_model.safetensors' tensors into the adapters (names as adapter_tensors gives);
// refuses a missing or unexpected key and a shape mismatch.
void load_adapter_tensors(torch::nn::Module& root, const LoraSettings& s,
                          const std::vector<std::pair<std::string, torch::Tensor>>& tensors);

// Folds each adapter into its base weight (W += scaling · B A, in the weight's dtype) and zeroes
// lora_B (LibTorch cannot unregister a child): the base parameters, less those
// is_adapter_parameter names, are then the plain policy PEFT's merge_and_unload gives.
void merge_adapters(torch::nn::Module& root);
bool is_adapter_parameter(const std::string& name);

// The hook policies/linear.h calls: y plus the layer's adapter output (y itself when the layer has
// none). adapters_present() is false until the first inject(), so policies without LoRA pay one
// relaxed load per Linear call.
bool adapters_present();
torch::Tensor add_adapter(const torch::nn::LinearImpl& layer, const torch::Tensor& x, torch::Tensor y);

}  // namespace lerobot::lora
