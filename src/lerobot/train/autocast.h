// RAII autocast scope for --accelerator.mixed_precision (bf16 on CPU or CUDA, fp16 on CUDA), as
// accelerate's autocast context: enabled for the forward pass, cache cleared on exit.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace lerobot {

class AutocastScope {
 public:
  // mode: "no" (does nothing), "bf16", "fp16". fp16 autocast exists on CUDA only; on CPU the fp16
  // mode keeps fp32 compute (the loss scaler still runs) and the trainer says so once.
  AutocastScope(const std::string& mode, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  bool cuda_ = false;
};

// Whether `mode` gives real reduced-precision compute on `device`.
bool autocast_supported(const std::string& mode, const c10::Device& device);

}  // namespace lerobot
