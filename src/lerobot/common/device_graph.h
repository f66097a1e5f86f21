// DeviceGraph: device work recorded once (a CUDA graph) and replayed as one launch, the tool of the
// whole-step capture in train/step_capture.h. The CUDA parts compile only in CUDA builds
// (LEROBOT_WITH_CUDA); elsewhere available() is false and the other calls are internal errors.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>

namespace lerobot {

class DeviceGraph {
 public:
  explicit DeviceGraph(const c10::Device& device);
  ~DeviceGraph();
  DeviceGraph(const DeviceGraph&) = delete;
  DeviceGraph& operator=(const DeviceGraph&) = delete;

  // Whether graphs can be captured on `device`: a CUDA build of LibTorch (2.x) and a CUDA device.
  static bool available(const c10::Device& device);

  // Runs fn eagerly on the side stream the capture will use, ordered after the work already
  // queued on the current stream, and makes the current stream wait for it (PyTorch's warm-up
  // before capture: lazily made state, cuBLAS workspaces and autograd streams settle).
  void run_on_side_stream(const std::function<void()>& fn);
  // Records the device work of fn without running it (thread-local capture mode on 2.x, so the
  // loader's threads may go on allocating pinned memory). A host synchronisation inside fn makes
  // CUDA refuse the capture: the error is rethrown and the graph stays empty.
  void capture(const std::function<void()>& fn);
  // Runs the recorded work on the current stream.
  void replay();
  bool captured() const { return captured_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool captured_ = false;
};

}  // namespace lerobot
