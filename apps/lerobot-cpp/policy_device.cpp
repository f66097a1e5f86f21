#include "policy_device.h"

#include <torch/torch.h>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"

namespace lerobot::app {

c10::Device pick_policy_device(const std::optional<std::string>& requested) {
  const std::string name = requested.value_or(torch::cuda::is_available() ? "cuda" : "cpu");
  torch::Device device(torch::kCPU);
  try {
    device = torch::Device(name);
  } catch (const c10::Error&) {
    throw_usage("unknown device '" + name + "'", "--policy.device", "use cpu or cuda");
  }
  if (device.is_cuda() && !torch::cuda::is_available()) {
    LOG_WARNING << "--policy.device=" << name << " but no CUDA device is available; running on the CPU";
    return torch::Device(torch::kCPU);
  }
  return device;
}

}  // namespace lerobot::app
