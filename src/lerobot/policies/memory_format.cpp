// use_channels_last / is_channels_last (see memory_format.h).
#include "lerobot/policies/memory_format.h"

namespace lerobot {

int64_t use_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  int64_t n = 0;
  for (auto& p : module.parameters()) {
    if (p.dim() != 4) continue;
    p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
    ++n;
  }
  return n;
}

bool is_channels_last(const torch::nn::Module& module) {
  for (const auto& p : module.parameters())
    if (p.dim() == 4 && !p.is_contiguous(at::MemoryFormat::ChannelsLast)) return false;
  return true;
}

}  // namespace lerobot
