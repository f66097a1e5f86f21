// AutocastScope implementation over the version shim in torch_compat.h.
#define LEROBOT_AUTOCAST_COMPAT
#include "lerobot/train/autocast.h"

#include "lerobot/common/torch_compat.h"

namespace lerobot {

bool autocast_supported(const std::string& mode, const c10::Device& device) {
  if (mode == "bf16") return true;
  if (mode == "fp16") return device.is_cuda();
  return false;
}

AutocastScope::AutocastScope(const std::string& mode, const c10::Device& device) {
  if (!autocast_supported(mode, device)) return;
  cuda_ = device.is_cuda();
  active_ = true;
  at::autocast::increment_nesting();
  compat::set_autocast(cuda_, true, mode == "bf16" ? at::kBFloat16 : at::kHalf);
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  compat::set_autocast(cuda_, false, at::kFloat);
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
}

}  // namespace lerobot
