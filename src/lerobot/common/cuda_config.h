// --cuda.*: lerobot.cpp's CUDA switches, shared by `train` and `eval`. LeRobot's train and eval
// scripts turn TF32 and cuDNN benchmark on in code (no config field); these flags let a user turn
// each off, and turn off CUDA graphs.
#pragma once

#include <optional>
#include <string>

#include "lerobot/common/config/config.h"

namespace lerobot {

struct CudaConfig : Config {
  bool tf32 = true;
  bool cudnn_benchmark = true;
  bool graphs = true;
  std::optional<bool> channels_last;  // null: where measured faster (channels_last_enabled)
  void visit(FieldVisitor& v) override {
    field(v, "tf32", tf32, "TF32 for float32 matmuls and convolutions on CUDA (LeRobot enables it)");
    field(v, "cudnn_benchmark", cudnn_benchmark,
          "cuDNN benchmark mode, the fastest algorithm per shape (LeRobot: on; train's "
          "--cudnn_deterministic: off)");
    field(v, "graphs", graphs,
          "CUDA graphs where safe: the whole training step (one process, fused Adam/AdamW, no fp16 loss "
          "scaling) and each action-chunk prediction (the log says why when they are not used)");
    field(v, "channels_last", channels_last,
          "Convolution weights in channels-last (NHWC) memory format, the layout of cuDNN's bf16 "
          "tensor-core kernels; checkpoints are unchanged. null (default): on for bf16 training on "
          "CUDA (ACT, batch 64, 480x480, H100: 66.0 -> 56.9 ms/step), off otherwise");
  }
  // --cuda.channels_last when given; otherwise on exactly where it was measured faster: training
  // on CUDA with bf16 autocast (fp32 and inference are untimed in NHWC and stay NCHW).
  bool channels_last_enabled(bool on_cuda, const std::string& mixed_precision) const {
    return channels_last.value_or(on_cuda && mixed_precision == "bf16");
  }
};

}  // namespace lerobot
