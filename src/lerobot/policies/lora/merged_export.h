// A plain pretrained_model folder from an adapter checkpoint (the pretrained_model of a --peft.*
// run: config.json with use_peft true, adapter_config.json, adapter_model.safetensors, processor
// files): the base policy named by base_model_name_or_path with every adapter folded into its
// weight (W + lora_alpha/r · B·A, PEFT's merge_and_unload), written as config.json (use_peft
// false), model.safetensors (the base's keys, no adapter tensor) and the processor files copied,
// so eval, infer and InferencePolicy load it like any other policy, without the base.
#pragma once

#include <cstdint>
#include <filesystem>

namespace lerobot::lora {

struct MergedExport {
  int64_t merged_modules = 0;  // Linear layers whose adapters were folded in
  int64_t tensors = 0;         // tensors in model.safetensors
};

// Refuses (usage errors naming --policy.path / --output_dir) a folder that is not an adapter
// checkpoint and an output folder that exists. Written into a temporary sibling of output_dir,
// then renamed: output_dir appears complete or not at all.
MergedExport export_merged_policy(const std::filesystem::path& adapter_dir, const std::filesystem::path& output_dir);

}  // namespace lerobot::lora
