// The NCCL process group (CUDA tensors on cuda:LOCAL_RANK); compiled only with LEROBOT_WITH_NCCL.
#ifdef LEROBOT_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/distributed/c10d_group.h"

namespace lerobot {

std::shared_ptr<ProcessGroup> make_nccl_group(const LaunchEnv& env,
                                              const ProcessGroupOptions& options) {
  int devices = static_cast<int>(torch::cuda::device_count());
  if (env.local_rank >= devices)
    throw_usage("local rank " + std::to_string(env.local_rank) + " has no GPU (" +
                    std::to_string(devices) + " visible)",
                "LOCAL_RANK", "start at most one process per visible GPU");
  // Communicators are created lazily for the current device: pick ours before anything else.
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(env.local_rank));
  // Let the watchdog abort a timed-out communicator instead of leaving it hanging.
  setenv(compat::kNcclAsyncErrorHandlingEnv, "1", 0);
  Rendezvous rv = rendezvous(env, options, "nccl");
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  // The watchdog's own limit is longer than ours: our wait below fails first and names the silent
  // rank (the watchdog counts from the launch and would abort the process without saying who); it
  // stays the last resort for a communicator that never returns.
  opts->timeout = options.timeout + std::max<std::chrono::milliseconds>(std::chrono::seconds(60), options.timeout / 2);
  auto ctx = std::make_shared<C10dContext>();
  ctx->monitor = rv.monitor;
  ctx->timeout = options.timeout;
  auto limit = options.timeout;
  // NCCL's wait() only makes the current stream wait; poll for completion so a hang on the host
  // side ends in an error naming the rank instead of an endless wait.
  ctx->wait = [limit](const c10::intrusive_ptr<c10d::Work>& w) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!w->isCompleted()) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("NCCL collective did not complete within the timeout");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    w->wait();  // rethrows a stored error; orders the current stream after the collective
  };
  auto make = [opts](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size) {
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
  };
  auto group = std::make_shared<C10dGroup<c10d::ProcessGroupNCCL>>(
      rv.store, make, ctx, env.rank, env.world_size, "nccl",
      torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank)));
  group->set_shutdown([](c10d::ProcessGroupNCCL& pg) { compat::shutdown_backend(pg); });
  return group;
}

}  // namespace lerobot
#endif  // LEROBOT_WITH_NCCL
