// Shared helpers of the dataset tests: temp dirs, a small synthetic 2-camera dataset, python.
#pragma once

#include <torch/torch.h>

#include <string>

#include "lerobot/common/fs.h"
#include "support/run_command.h"  // run_python

namespace lerobot::testing {

// A fresh empty directory under the system temp dir (removed by the destructor).
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag);
  ~TempDir();
};

// Deterministic synthetic content of frame `i` of episode `e`.
torch::Tensor synth_state(int64_t e, int64_t i);   // float32 (4)
torch::Tensor synth_action(int64_t e, int64_t i);  // float32 (3)
torch::Tensor synth_image(int64_t cam, int64_t e, int64_t i, int64_t h, int64_t w);  // uint8 (H,W,3)

struct SynthSpec {
  int64_t episodes = 3;
  int64_t frames_per_episode = 12;
  int64_t height = 64, width = 80;
  int64_t fps = 10;
  double data_mb = 100, video_mb = 200;  // small values force rollover
};
// Writes a v3.0 dataset with observation.state, action and cameras observation.images.{a,b}.
void write_synth_dataset(const fs::path& root, const SynthSpec& spec);

}  // namespace lerobot::testing
