// torch::Tensor adapter for the safetensors reader/writer.
#include "lerobot/common/safetensors_torch.h"

#include <torch/torch.h>

#include "lerobot/common/error.h"

namespace lerobot {

torch::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::kF64: return torch::kFloat64;
    case DType::kF32: return torch::kFloat32;
    case DType::kF16: return torch::kFloat16;
    case DType::kBF16: return torch::kBFloat16;
    case DType::kI64: return torch::kInt64;
    case DType::kI32: return torch::kInt32;
    case DType::kI16: return torch::kInt16;
    case DType::kI8: return torch::kInt8;
    case DType::kU8: return torch::kUInt8;
    case DType::kBool: return torch::kBool;
  }
  return torch::kFloat32;
}

DType from_scalar_type(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat64: return DType::kF64;
    case torch::kFloat32: return DType::kF32;
    case torch::kFloat16: return DType::kF16;
    case torch::kBFloat16: return DType::kBF16;
    case torch::kInt64: return DType::kI64;
    case torch::kInt32: return DType::kI32;
    case torch::kInt16: return DType::kI16;
    case torch::kInt8: return DType::kI8;
    case torch::kUInt8: return DType::kU8;
    case torch::kBool: return DType::kBool;
    default: break;
  }
  throw_usage(std::string("dtype ") + c10::toString(type) + " cannot be stored in safetensors");
}

torch::Tensor to_tensor(const TensorView& view) {
  auto t = torch::empty(view.shape, torch::TensorOptions().dtype(to_scalar_type(view.dtype)));
  if (view.nbytes > 0) std::memcpy(t.data_ptr(), view.data, view.nbytes);
  return t;
}

TensorMap load_safetensors(const fs::path& path) {
  SafetensorsReader reader(path);
  TensorMap out;
  for (const auto& kv : reader.tensors()) out.emplace(kv.first, to_tensor(kv.second));
  return out;
}

void save_safetensors(const fs::path& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<torch::Tensor> keep;
  std::vector<TensorEntry> entries;
  keep.reserve(tensors.size());
  for (const auto& kv : tensors) {
    torch::Tensor t = kv.second.detach().to(torch::kCPU).contiguous();
    keep.push_back(t);
    entries.push_back({kv.first, from_scalar_type(t.scalar_type()),
                       std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.data_ptr(),
                       static_cast<size_t>(t.numel()) * t.element_size()});
  }
  write_safetensors(path, entries, metadata);
}

}  // namespace lerobot
