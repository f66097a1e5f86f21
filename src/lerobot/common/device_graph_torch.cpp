#include "lerobot/common/device_graph.h"

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"

#if defined(LEROBOT_WITH_CUDA) && !defined(LEROBOT_NO_CUDA_GRAPHS)
#define LEROBOT_DEVICE_GRAPHS 1
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace lerobot {

#ifdef LEROBOT_DEVICE_GRAPHS

struct DeviceGraph::Impl {
  explicit Impl(const c10::Device& d)
      : index(d.has_index() ? d.index() : c10::cuda::current_device()),
        side(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index)) {}
  // fn on the side stream, after what the current stream has queued; the current stream then
  // waits for the side stream's work.
  void on_side(const std::function<void()>& fn) {
    c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(index);
    at::cuda::CUDAEvent queued;
    queued.record(current);
    queued.block(side);
    {
      c10::cuda::CUDAStreamGuard guard(side);
      fn();
    }
    at::cuda::CUDAEvent done;
    done.record(side);
    done.block(current);
  }
  c10::DeviceIndex index;
  c10::cuda::CUDAStream side;
  at::cuda::CUDAGraph graph;
};

DeviceGraph::DeviceGraph(const c10::Device& device) {
  if (!available(device)) throw_runtime("CUDA graphs need a CUDA device, got " + device.str());
  impl_ = std::make_unique<Impl>(device);
}

DeviceGraph::~DeviceGraph() = default;

bool DeviceGraph::available(const c10::Device& device) {
  return device.is_cuda() && LEROBOT_CUDAGRAPH_HAS_CAPTURE_MODE;
}

void DeviceGraph::run_on_side_stream(const std::function<void()>& fn) { impl_->on_side(fn); }

void DeviceGraph::capture(const std::function<void()>& fn) {
  if (captured_) throw_runtime("DeviceGraph::capture: already captured");
  impl_->on_side([&] {
#if LEROBOT_CUDAGRAPH_HAS_CAPTURE_MODE
    impl_->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
    impl_->graph.capture_begin();
#endif
    try {
      fn();
    } catch (...) {
      try {
        impl_->graph.capture_end();  // ends the stream capture; CUDA reports it invalidated
      } catch (...) {
      }
      impl_->graph.reset();
      throw;
    }
    impl_->graph.capture_end();
  });
  captured_ = true;
}

void DeviceGraph::replay() {
  if (!captured_) throw_runtime("DeviceGraph::replay: nothing captured");
  impl_->graph.replay();
}

#else  // a build without CUDA (or configured with -DLEROBOT_CUDA_GRAPHS=OFF)

struct DeviceGraph::Impl {};

DeviceGraph::DeviceGraph(const c10::Device& device) {
  throw_runtime("CUDA graphs need a CUDA build of LibTorch configured with LEROBOT_CUDA_GRAPHS=ON; this build has "
                "none (device " + device.str() + ")");
}

DeviceGraph::~DeviceGraph() = default;

bool DeviceGraph::available(const c10::Device&) { return false; }

void DeviceGraph::run_on_side_stream(const std::function<void()>& fn) { fn(); }

void DeviceGraph::capture(const std::function<void()>&) { throw_runtime("CUDA graphs need a CUDA build"); }

void DeviceGraph::replay() { throw_runtime("CUDA graphs need a CUDA build"); }

#endif

}  // namespace lerobot
