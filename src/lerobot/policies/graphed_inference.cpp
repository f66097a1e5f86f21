// GraphedChunkPredictor (see graphed_inference.h).
#include "lerobot/policies/graphed_inference.h"

#include "lerobot/common/device_graph.h"
#include "lerobot/common/logging.h"

namespace lerobot {

GraphedChunkPredictor::GraphedChunkPredictor(Policy& policy, bool enabled, int warmup_calls)
    : policy_(policy), enabled_(enabled), warmup_calls_(warmup_calls) {
  if (!enabled_) {
    why_not_ = "graphs turned off";
  } else if (!DeviceGraph::available(policy_.device())) {
    enabled_ = false;
    why_not_ = "the policy is on " + policy_.device().str() +
               " (CUDA graphs need a CUDA device and a CUDA build of LibTorch 2.x)";
  }
}

GraphedChunkPredictor::~GraphedChunkPredictor() {
  if (serving_) policy_.set_chunk_source(nullptr);
}

void GraphedChunkPredictor::serve_select_action() {
  policy_.set_chunk_source([this](const Batch& batch) { return predict(batch); });
  serving_ = true;
}

bool GraphedChunkPredictor::replaying() const { return graph_ && graph_->captured(); }

torch::Tensor GraphedChunkPredictor::predict(const Batch& batch) {
  if (!enabled_) return policy_.predict_action_chunk(batch);
  if (inputs_.initialized() && !inputs_.matches(batch)) return policy_.predict_action_chunk(batch);
  if (replaying()) {
    inputs_.copy_from(batch);
    graph_->replay();
    return output_.clone();
  }
  if (!graph_) graph_ = std::make_unique<DeviceGraph>(policy_.device());
  if (++calls_ <= warmup_calls_) {  // eager, on the stream the capture will use
    torch::Tensor out;
    graph_->run_on_side_stream([&] { out = policy_.predict_action_chunk(batch); });
    return out;
  }
  inputs_.init(batch);
  try {
    graph_->capture([&] { output_ = policy_.predict_action_chunk(inputs_.buffers()); });
  } catch (const std::exception& e) {
    LOG_WARNING << "CUDA graph capture of the policy's inference failed (" << e.what()
                << "); inference goes on without graphs";
    why_not_ = std::string("the capture failed: ") + e.what();
    enabled_ = false;
    graph_.reset();
    inputs_ = StaticBatch{};
    output_ = torch::Tensor();
    return policy_.predict_action_chunk(batch);
  }
  graph_->replay();
  return output_.clone();
}

}  // namespace lerobot
