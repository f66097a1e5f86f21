// Device resolution, CUDA math settings and allocator statistics (see device.h).
#include "lerobot/common/device.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstdlib>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"

#ifdef LEROBOT_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>  // and with it the CUDA runtime's API
#endif

namespace lerobot {
namespace {

c10::Device auto_device(int local_rank) {
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (gpus == 0) return c10::Device(c10::kCPU);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(std::max(0, local_rank) % gpus));
}

}  // namespace

c10::Device resolve_device(const std::optional<std::string>& requested, int local_rank, const std::string& flag) {
  if (!requested || requested->empty()) {
    // The test suite sets LEROBOT_CPP_DEFAULT_DEVICE=cpu: on a GPU machine only the tests that ask
    // for CUDA use it, and the CPU checks stay the CPU checks (bit-exact resumes, TF32-free math).
    const char* fallback = std::getenv("LEROBOT_CPP_DEFAULT_DEVICE");
    if (fallback && *fallback) return resolve_device(std::string(fallback), local_rank, "LEROBOT_CPP_DEFAULT_DEVICE");
    return auto_device(local_rank);
  }
  const std::string& name = *requested;
  std::optional<c10::Device> parsed;
  try {
    parsed = c10::Device(name);
  } catch (const c10::Error&) {
  }
  const bool known = parsed && (parsed->is_cpu() || parsed->is_cuda() || parsed->type() == c10::kMPS ||
                                parsed->type() == c10::kXPU);
  if (!known)
    throw_usage("unknown device '" + name + "'", flag, "use cpu, cuda or cuda:<index> (or leave it unset to pick one)");
  if (parsed->is_cpu()) return c10::Device(c10::kCPU);
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (!parsed->is_cuda() || gpus == 0) {
    const c10::Device fallback = auto_device(local_rank);
    LOG_WARNING << "device '" << name << "' (" << flag << ") is not available here: using " << fallback.str();
    return fallback;
  }
  if (!parsed->has_index()) return auto_device(local_rank);
  if (parsed->index() >= gpus)
    throw_usage("device '" + name + "' does not exist: " + std::to_string(gpus) + " GPU(s) visible", flag,
                "use cuda (the process's own GPU) or cuda:0..cuda:" + std::to_string(gpus - 1));
  return *parsed;
}

std::string device_config_name(const c10::Device& device, const std::optional<std::string>& requested) {
  if (device.is_cuda() && requested && requested->find(':') != std::string::npos) return device.str();
  return c10::DeviceTypeName(device.type(), /*lower_case=*/true);
}

void apply_cuda_math_settings(const CudaMathSettings& settings) {
  auto& ctx = at::globalContext();
  ctx.setAllowTF32CuBLAS(settings.tf32);
  ctx.setAllowTF32CuDNN(settings.tf32);
  ctx.setBenchmarkCuDNN(settings.cudnn_benchmark && !settings.cudnn_deterministic);
  ctx.setDeterministicCuDNN(settings.cudnn_deterministic);
}

std::optional<DeviceMemoryPeak> device_memory_peak(const c10::Device& device) {
#ifdef LEROBOT_WITH_CUDA
  if (device.is_cuda() && torch::cuda::is_available()) {
    decltype(c10::cuda::CUDACachingAllocator::getDeviceStats(0)) stats;
    try {
      stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.has_index() ? device.index() : 0);
    } catch (const c10::Error&) {
      // LibTorch 2.x sets its allocator up at the first CUDA allocation and refuses the question
      // before it ("Invalid device argument"): nothing has been allocated, so the peaks are 0.
      return DeviceMemoryPeak{0.0, 0.0};
    }
    constexpr size_t kAggregate = 0;  // StatType::AGGREGATE (all pools), index 0 on 1.13 and 2.x
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    return DeviceMemoryPeak{static_cast<double>(stats.allocated_bytes[kAggregate].peak) / kGiB,
                            static_cast<double>(stats.reserved_bytes[kAggregate].peak) / kGiB};
  }
#endif
  (void)device;
  return std::nullopt;
}

std::optional<int64_t> device_total_bytes(const c10::Device& device) {
#ifdef LEROBOT_WITH_CUDA
  if (device.is_cuda() && torch::cuda::is_available()) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device.has_index() ? device.index() : 0) == cudaSuccess)
      return static_cast<int64_t>(prop.totalGlobalMem);
  }
#endif
  (void)device;
  return std::nullopt;
}

}  // namespace lerobot
