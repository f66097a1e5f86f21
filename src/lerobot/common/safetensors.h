// safetensors: the file format of model.safetensors, optimizer state and normalizer stats.
// Layout: u64 little-endian header length N, N bytes of JSON header
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the byte buffer. Reads are memory-mapped and every offset is validated.
// This header is torch-free; safetensors_torch.h converts to and from torch::Tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"

namespace lerobot {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);              // "F32", "BF16", ...
bool parse_dtype(const std::string& name, DType* out);

// A tensor inside a mapped file (or any byte buffer); `data` stays valid while the owner lives.
struct TensorView {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
  int64_t numel() const;
};

// A memory-mapped safetensors file. Opening validates the whole header; a malformed file throws a
// data error naming the file and the fault.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const fs::path& path);
  // Parse from an in-memory buffer (used by the fuzz target); `label` names it in errors.
  SafetensorsReader(const uint8_t* data, size_t size, std::string label);

  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const TensorView& at(const std::string& name) const;  // throws naming the missing key
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::string& label() const { return label_; }

 private:
  void parse(const uint8_t* data, size_t size);
  MappedFile file_;
  std::string label_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorView> tensors_;
};

// One tensor to write; `data` must hold numel * dtype_size bytes, row-major.
struct TensorEntry {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

// Serialises to bytes (header padded with spaces to a multiple of 8, tensors in name order).
std::string serialize_safetensors(const std::vector<TensorEntry>& tensors,
                                  const std::map<std::string, std::string>& metadata = {});
// Writes atomically (temp file, fsync, rename).
void write_safetensors(const fs::path& path, const std::vector<TensorEntry>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace lerobot
