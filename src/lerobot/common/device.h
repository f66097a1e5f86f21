// Devices: the one resolver of --policy.device for every subcommand, the CUDA math settings that
// LeRobot's train script makes, and the CUDA caching allocator's peak memory.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

namespace lerobot {

// `requested` is the --policy.device value (or the "device" of a checkpoint's config.json):
// - null: $LEROBOT_CPP_DEFAULT_DEVICE when set (the test suite sets cpu), else cuda when a GPU is
//   visible, else cpu (LeRobot auto-selects too);
// - "cpu"; "cuda" → the process's GPU, cuda:(local_rank % visible GPUs); "cuda:N" keeps N
//   (an N beyond the visible GPUs is a usage error naming `flag`);
// - "cuda" without a GPU, and "mps"/"xpu" (what LeRobot writes on other machines): a warning and
//   the automatic choice, as LeRobot's PreTrainedConfig does;
// - anything else: a usage error naming `flag` and the accepted values.
c10::Device resolve_device(const std::optional<std::string>& requested, int local_rank = 0,
                           const std::string& flag = "--policy.device");

// What to record as the policy's "device" in config.json: "cuda:N" when the user named the index,
// else the device type ("cuda", "cpu"), so a checkpoint does not pin the GPU it happened to use.
std::string device_config_name(const c10::Device& device, const std::optional<std::string>& requested);

// LeRobot's train script: cudnn.benchmark = not cudnn_deterministic, TF32 matmuls allowed.
struct CudaMathSettings {
  bool tf32 = true;              // TF32 for float32 matmuls and convolutions
  bool cudnn_benchmark = true;   // cuDNN picks the fastest algorithm per shape
  bool cudnn_deterministic = false;
};
// Applies them process-wide (harmless on CPU-only builds: the flags are only read by CUDA kernels).
void apply_cuda_math_settings(const CudaMathSettings& settings);

// The caching allocator's high-water marks on `device` since the process started (what
// torch.cuda.max_memory_allocated / max_memory_reserved report), in GiB; nullopt on CPU or in a
// build without CUDA.
struct DeviceMemoryPeak {
  double allocated_gb = 0.0;
  double reserved_gb = 0.0;
};
std::optional<DeviceMemoryPeak> device_memory_peak(const c10::Device& device);

// The memory of the GPU `device` is on, in bytes (cudaDeviceProp::totalGlobalMem); nullopt on CPU
// or in a build without CUDA.
std::optional<int64_t> device_total_bytes(const c10::Device& device);

}  // namespace lerobot
