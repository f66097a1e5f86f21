// DeviceSums: per-step scalars (the loss, its parts, the grad norm) summed where they live, on the
// device, and read back all at once when the log line is due: one host sync per log step instead
// of one per value and step.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <utility>

namespace lerobot {

class DeviceSums {
 public:
  // Adds a 0-d tensor under `key` (an undefined tensor is ignored).
  void add(const std::string& key, const torch::Tensor& value);
  // Every key's (sum, count) since the last take(), read back in one transfer; then empty.
  std::map<std::string, std::pair<double, int64_t>> take();
  bool empty() const { return sums_.empty(); }

 private:
  std::map<std::string, torch::Tensor> sums_;  // float64, on the values' device
  std::map<std::string, int64_t> counts_;
};

}  // namespace lerobot
