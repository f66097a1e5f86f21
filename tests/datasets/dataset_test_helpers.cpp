// Shared helpers of the dataset tests (see dataset_test_helpers.h).
#include "dataset_test_helpers.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>
#include <atomic>
#include <cstdio>
#include <stdexcept>

#include "lerobot/datasets/dataset_writer.h"
#include "support/run_command.h"
#include "support/process_temp_dir.h"

namespace lerobot::testing {

TempDir::TempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  path = lerobot::testing::fresh_temp_dir("ds_" + tag + "_" + std::to_string(counter++));
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

torch::Tensor synth_state(int64_t e, int64_t i) {
  return torch::tensor({float(e), float(i), 0.5f * float(i) - 1.0f, float(e * 100 + i) / 7.0f});
}

torch::Tensor synth_action(int64_t e, int64_t i) {
  return torch::tensor({float(i) * 0.25f, -float(e), float(e + i) * 0.125f});
}

torch::Tensor synth_image(int64_t cam, int64_t e, int64_t i, int64_t h, int64_t w) {
  // Smooth gradients plus a per-frame level: compresses well, so the AV1 error stays small.
  auto y = torch::arange(h, torch::kFloat32).view({h, 1, 1});
  auto x = torch::arange(w, torch::kFloat32).view({1, w, 1});
  auto c = torch::tensor({0.0f, 1.0f, 2.0f}).view({1, 1, 3});
  auto v = 40.0f + 60.0f * c + 0.5f * y + 0.3f * x + 8.0f * float(i % 10) + 20.0f * float(e) + 30.0f * float(cam);
  return v.clamp(0, 255).to(torch::kUInt8);
}

void write_synth_dataset(const fs::path& root, const SynthSpec& s) {
  std::vector<FeatureSpec> feats;
  feats.push_back({"observation.state", "float32", {4}, Json::array({"a", "b", "c", "d"}), Json()});
  feats.push_back({"action", "float32", {3}, Json::array({"x", "y", "z"}), Json()});
  feats.push_back({"observation.images.a", "video", {s.height, s.width, 3}, Json(), Json()});
  feats.push_back({"observation.images.b", "video", {s.height, s.width, 3}, Json(), Json()});
  DatasetWriterOptions o;
  o.data_files_size_in_mb = s.data_mb;
  o.video_files_size_in_mb = s.video_mb;
  o.robot_type = "synthetic";
  DatasetWriter w(root, s.fps, feats, o);
  for (int64_t e = 0; e < s.episodes; ++e) {
    for (int64_t i = 0; i < s.frames_per_episode; ++i) {
      w.add_frame({{"observation.state", synth_state(e, i)},
                   {"action", synth_action(e, i)},
                   {"observation.images.a", synth_image(0, e, i, s.height, s.width)},
                   {"observation.images.b", synth_image(1, e, i, s.height, s.width)}});
    }
    w.save_episode(e % 2 == 0 ? "pick the cube" : "place the cube");
  }
  w.finalize();
}

}  // namespace lerobot::testing
