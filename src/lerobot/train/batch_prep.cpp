// Batch preparation (see batch_prep.h).
#include "lerobot/train/batch_prep.h"

#include <torch/torch.h>

namespace lerobot {

Batch prepare_batch(const std::map<std::string, torch::Tensor>& tensors, const PolicyProcessors& processors,
                    const torch::Device& device, const std::vector<std::string>& tasks) {
  Batch batch;
  for (const auto& [key, t] : tensors) {
    torch::Tensor x = t.to(device, /*non_blocking=*/true);
    if (x.scalar_type() == torch::kUInt8) x = x.to(torch::kFloat32).div_(255.0);  // cameras (B,C,H,W)
    batch[key] = x;
  }
  return processors.preprocess(batch, tasks);
}

}  // namespace lerobot
