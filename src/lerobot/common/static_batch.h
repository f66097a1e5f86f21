// StaticBatch: named device tensors that keep their memory from call to call, the inputs of a
// recorded CUDA graph (common/device_graph.h). Each new batch is copied into the same buffers; a
// batch of other keys, shapes, dtypes or devices is reported, not copied.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

namespace lerobot {

class StaticBatch {
 public:
  using Tensors = std::map<std::string, at::Tensor>;  // = Batch (policies/policy.h)

  // Allocates buffers shaped as `first` (same device and dtype) and copies it in.
  void init(const Tensors& first);
  bool initialized() const { return !buffers_.empty(); }
  // Whether `batch` has the same keys, shapes, dtypes and devices as the buffers; *difference
  // names the first difference when not.
  bool matches(const Tensors& batch, std::string* difference = nullptr) const;
  // Copies `batch` into the buffers (non-blocking: the copies are queued on the current stream).
  void copy_from(const Tensors& batch);
  const Tensors& buffers() const { return buffers_; }

 private:
  Tensors buffers_;
};

}  // namespace lerobot
