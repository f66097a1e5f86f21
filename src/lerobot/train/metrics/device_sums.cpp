// DeviceSums (see device_sums.h).
#include "lerobot/train/metrics/device_sums.h"

#include <torch/torch.h>

namespace lerobot {

void DeviceSums::add(const std::string& key, const torch::Tensor& value) {
  if (!value.defined()) return;
  auto it = sums_.find(key);
  if (it == sums_.end()) {
    sums_.emplace(key, value.detach().to(torch::kFloat64).reshape({}).clone());
  } else {
    it->second.add_(value.detach().reshape({}));
  }
  ++counts_[key];
}

std::map<std::string, std::pair<double, int64_t>> DeviceSums::take() {
  std::map<std::string, std::pair<double, int64_t>> out;
  if (sums_.empty()) return out;
  std::vector<torch::Tensor> parts;
  for (const auto& [key, sum] : sums_) parts.push_back(sum);
  const torch::Tensor host = torch::stack(parts).to(torch::kCPU).contiguous();  // the one device read
  const double* v = host.data_ptr<double>();
  size_t i = 0;
  for (const auto& [key, sum] : sums_) out[key] = {v[i++], counts_.at(key)};
  sums_.clear();
  counts_.clear();
  return out;
}

}  // namespace lerobot
