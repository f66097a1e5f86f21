// The one device resolver (--policy.device for train, eval and infer), the CUDA math settings and
// the allocator peak: what each input resolves to on this machine, with or without a GPU.
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <torch/cuda.h>

#include "lerobot/common/device.h"
#include "lerobot/common/error.h"

namespace lerobot {
namespace {

const int kGpus = static_cast<int>(torch::cuda::device_count());

ErrorKind kind_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return ErrorKind::kInternal;  // nothing thrown
}

TEST(ResolveDevice, UnknownNamesAreUsageErrorsNamingTheFlag) {
  for (const std::string bad : {"tpu", "foo", "CUDA", "cuda:x", "gpu", "xla"}) {
    std::string msg;
    EXPECT_EQ(kind_of([&] { resolve_device(bad, 0, "--policy.device"); }, &msg), ErrorKind::kUsage) << bad;
    EXPECT_NE(msg.find("--policy.device"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + bad + "'"), std::string::npos) << msg;
  }
  std::string msg;
  EXPECT_EQ(kind_of([&] { resolve_device("tpu", 0, "\"device\" in x/config.json"); }, &msg), ErrorKind::kUsage);
  EXPECT_NE(msg.find("x/config.json"), std::string::npos) << msg;
}

TEST(ResolveDevice, CpuIsCpuAndAutoPicksTheRanksGpuWhenThereIsOne) {
  // ctest runs every test with LEROBOT_CPP_DEFAULT_DEVICE=cpu: an unset device is then the CPU.
  const char* suite_default = std::getenv("LEROBOT_CPP_DEFAULT_DEVICE");
  const std::string saved = suite_default ? suite_default : "";
  ::setenv("LEROBOT_CPP_DEFAULT_DEVICE", "cpu", 1);
  EXPECT_EQ(resolve_device(std::nullopt, 0), c10::Device(c10::kCPU));
  ::unsetenv("LEROBOT_CPP_DEFAULT_DEVICE");  // the automatic choice, as users get it
  EXPECT_EQ(resolve_device(std::string("cpu"), 3), c10::Device(c10::kCPU));
  for (int rank : {0, 1, 5}) {
    const c10::Device d = resolve_device(std::nullopt, rank);
    if (kGpus == 0) {
      EXPECT_EQ(d, c10::Device(c10::kCPU));
    } else {
      EXPECT_EQ(d, c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(rank % kGpus)));
    }
    EXPECT_EQ(resolve_device(std::string("cuda"), rank), d) << "cuda = the automatic choice for rank " << rank;
  }
  if (suite_default) ::setenv("LEROBOT_CPP_DEFAULT_DEVICE", saved.c_str(), 1);
}

TEST(ResolveDevice, AnIndexIsKeptOrRefusedAndOtherMachinesDevicesFallBack) {
  if (kGpus == 0) {
    // LeRobot switches an unavailable device to the automatic one with a warning.
    EXPECT_EQ(resolve_device(std::string("cuda:1")), c10::Device(c10::kCPU));
    EXPECT_EQ(resolve_device(std::string("mps")), c10::Device(c10::kCPU));
    EXPECT_EQ(resolve_device(std::string("xpu")), c10::Device(c10::kCPU));
    return;
  }
  EXPECT_EQ(resolve_device("cuda:" + std::to_string(kGpus - 1)), c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(kGpus - 1)));
  std::string msg;
  EXPECT_EQ(kind_of([&] { resolve_device("cuda:" + std::to_string(kGpus)); }, &msg), ErrorKind::kUsage);
  EXPECT_NE(msg.find("GPU(s) visible"), std::string::npos) << msg;
}

TEST(ResolveDevice, ConfigNameKeepsAnExplicitIndexOnly) {
  EXPECT_EQ(device_config_name(c10::Device(c10::kCPU), std::nullopt), "cpu");
  EXPECT_EQ(device_config_name(c10::Device(c10::kCPU), std::string("cuda")), "cpu");
  EXPECT_EQ(device_config_name(c10::Device(c10::kCUDA, 3), std::string("cuda")), "cuda");
  EXPECT_EQ(device_config_name(c10::Device(c10::kCUDA, 3), std::nullopt), "cuda");
  EXPECT_EQ(device_config_name(c10::Device(c10::kCUDA, 1), std::string("cuda:1")), "cuda:1");
}

TEST(CudaMathSettings, SetTheProcessWideFlagsLikeLeRobotsTrainScript) {
  auto& ctx = at::globalContext();
  apply_cuda_math_settings({/*tf32=*/true, /*cudnn_benchmark=*/true, /*cudnn_deterministic=*/false});
  EXPECT_TRUE(ctx.allowTF32CuBLAS());
  EXPECT_TRUE(ctx.allowTF32CuDNN());
  EXPECT_TRUE(ctx.benchmarkCuDNN());
  EXPECT_FALSE(ctx.deterministicCuDNN());
  apply_cuda_math_settings({/*tf32=*/false, /*cudnn_benchmark=*/true, /*cudnn_deterministic=*/true});
  EXPECT_FALSE(ctx.allowTF32CuBLAS());
  EXPECT_FALSE(ctx.allowTF32CuDNN());
  EXPECT_FALSE(ctx.benchmarkCuDNN()) << "deterministic cuDNN turns benchmark mode off";
  EXPECT_TRUE(ctx.deterministicCuDNN());
  apply_cuda_math_settings({/*tf32=*/true, /*cudnn_benchmark=*/false, /*cudnn_deterministic=*/false});
  EXPECT_FALSE(ctx.benchmarkCuDNN());
  EXPECT_TRUE(ctx.allowTF32CuBLAS());
}

TEST(DeviceMemoryPeak, NoneOnCpuAndTheAllocatorsPeakOnCuda) {
  EXPECT_FALSE(device_memory_peak(c10::Device(c10::kCPU)).has_value());
  const auto peak = device_memory_peak(c10::Device(c10::kCUDA, 0));
#ifdef LEROBOT_TEST_CUDA_BUILD
  if (kGpus > 0) {
    auto t = torch::ones({64, 1024, 1024}, torch::TensorOptions().device(torch::kCUDA));  // 256 MiB
    const auto after = device_memory_peak(c10::Device(c10::kCUDA, 0));
    ASSERT_TRUE(after.has_value());
    EXPECT_GE(after->allocated_gb, 0.25);
    EXPECT_GE(after->reserved_gb, after->allocated_gb);
    return;
  }
#endif
  if (kGpus == 0) {
    EXPECT_FALSE(peak.has_value());
  }
}

}  // namespace
}  // namespace lerobot
