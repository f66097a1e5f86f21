// StaticBatch (see static_batch.h).
#include "lerobot/common/static_batch.h"

#include <c10/core/ScalarType.h>

namespace lerobot {

namespace {

std::string shape_of(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "] " + std::string(c10::toString(t.scalar_type()));
}

}  // namespace

void StaticBatch::init(const Tensors& first) {
  buffers_.clear();
  for (const auto& [k, v] : first) buffers_[k] = v.detach().clone();
}

bool StaticBatch::matches(const Tensors& batch, std::string* difference) const {
  auto differ = [&](const std::string& what) {
    if (difference) *difference = what;
    return false;
  };
  if (batch.size() != buffers_.size())
    return differ("the batch has " + std::to_string(batch.size()) + " keys, not " + std::to_string(buffers_.size()));
  for (const auto& [k, v] : batch) {
    auto it = buffers_.find(k);
    if (it == buffers_.end()) return differ("new key '" + k + "'");
    const at::Tensor& b = it->second;
    if (v.sizes() != b.sizes() || v.scalar_type() != b.scalar_type() || v.device() != b.device())
      return differ("'" + k + "' is " + shape_of(v) + ", captured " + shape_of(b));
  }
  return true;
}

void StaticBatch::copy_from(const Tensors& batch) {
  for (const auto& [k, v] : batch) buffers_.at(k).copy_(v, /*non_blocking=*/true);
}

}  // namespace lerobot
