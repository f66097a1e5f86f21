// --cuda.*: lerobot.cpp's CUDA switches, shared by `train` and `eval`. LeRobot's train and eval
// scripts turn TF32 and cuDNN benchmark on in code (no config field); these flags let a user turn
// each off, and turn off CUDA graphs.
#pragma once

#include "lerobot/common/config/config.h"

namespace lerobot {

struct CudaConfig : Config {
  bool tf32 = true;
  bool cudnn_benchmark = true;
  bool graphs = true;
  bool channels_last = false;
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
          "tensor-core kernels; checkpoints are unchanged. Off until measured faster on a GPU");
  }
};

}  // namespace lerobot
