// GraphedChunkPredictor: repeated inference on a GPU as one CUDA-graph replay. The policy's
// predict_action_chunk (for Diffusion the whole denoising loop: num_inference_steps U-Net calls
// and scheduler steps, the initial noise included) is recorded once for a batch shape, after
// `warmup_calls` eager calls on the capture's side stream, and every later call of that shape
// copies its inputs into static buffers and replays it: one launch instead of hundreds of
// kernels. Where graphs cannot be used (CPU, a LibTorch without them) or a call's shapes differ
// from the captured ones, the policy runs as usual; why_not() says why.
#pragma once

#include <memory>
#include <string>

#include "lerobot/common/static_batch.h"
#include "lerobot/policies/policy.h"

namespace lerobot {

class DeviceGraph;

class GraphedChunkPredictor {
 public:
  // `policy` must outlive this. enabled=false: every call runs the policy as usual.
  explicit GraphedChunkPredictor(Policy& policy, bool enabled = true, int warmup_calls = 2);
  ~GraphedChunkPredictor();
  GraphedChunkPredictor(const GraphedChunkPredictor&) = delete;
  GraphedChunkPredictor& operator=(const GraphedChunkPredictor&) = delete;

  // policy.predict_action_chunk(batch), as a replay where possible. Eval mode and no-grad are the
  // caller's, as for the policy itself. The result is the caller's own tensor.
  torch::Tensor predict(const Batch& batch);
  bool replaying() const;
  // Why calls run eagerly ("" while graphs are in use or still warming up).
  const std::string& why_not() const { return why_not_; }
  // Makes the policy's select_action take its chunks from predict() (Policy::set_chunk_source)
  // until this predictor is destroyed.
  void serve_select_action();

 private:
  Policy& policy_;
  bool enabled_;
  int warmup_calls_;
  int calls_ = 0;
  bool serving_ = false;
  std::string why_not_;
  StaticBatch inputs_;
  torch::Tensor output_;  // the captured call's result, refilled by every replay
  std::unique_ptr<DeviceGraph> graph_;
};

}  // namespace lerobot
