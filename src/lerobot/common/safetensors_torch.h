// Converts between safetensors files and torch::Tensor maps (CPU, contiguous).
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/common/safetensors.h"

namespace lerobot {

using TensorMap = std::map<std::string, torch::Tensor>;

// Copies every tensor out of the file (the result does not keep the map alive).
TensorMap load_safetensors(const fs::path& path);
torch::Tensor to_tensor(const TensorView& view);  // copies

// Writes CPU-contiguous copies of `tensors` atomically. Metadata defaults to {"format": "pt"}
// as huggingface_hub writes for model.safetensors.
void save_safetensors(const fs::path& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

torch::ScalarType to_scalar_type(DType dtype);
DType from_scalar_type(torch::ScalarType type);  // throws for unsupported types

}  // namespace lerobot
