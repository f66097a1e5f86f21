// bench_augment: writes a 1-camera AV1 dataset of 480x640 frames (4 episodes x 50 frames) with
// DatasetWriter into a temp dir, then measures DataLoader samples/s (batch 8) with
// --dataset.image_transforms off and on (LeRobot's default set, max_num_transforms 3), each with
// the same worker count, alternating off and on for three rounds, and prints the ratio of the
// medians (issue #18's target: >= 0.7x); first, each default transform's time on one frame.
// Usage: bench_augment [batches=20] [workers=2]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>
#include <cstdio>
#include <cstdlib>

#include "lerobot/common/host_allocator.h"
#include "lerobot/datasets/data_loader.h"
#include "lerobot/datasets/dataset_config.h"
#include "lerobot/datasets/dataset_writer.h"
#include "lerobot/datasets/image_transforms.h"

using namespace lerobot;

namespace {

double samples_per_s(const std::shared_ptr<LeRobotDataset>& ds, int workers, int batches, bool augment) {
  DataLoaderOptions lo;
  lo.batch_size = 8;
  lo.num_workers = workers;
  lo.prefetch_factor = 2;
  lo.seed = 1000;
  lo.pin_memory = 0;
  if (augment) {
    ImageTransformsConfig cfg;  // LeRobot's defaults: 3 of brightness, contrast, saturation, hue, sharpness, affine
    cfg.enable = true;
    lo.image_transforms = std::make_shared<const ImageTransforms>(cfg);
  }
  DataLoader loader(ds, lo);
  loader.next();  // warm-up (opens decoders, starts workers)
  auto t = std::chrono::steady_clock::now();
  for (int b = 0; b < batches; ++b) loader.next();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  return batches * 8 / s;
}

// Milliseconds per call of each LeRobot default transform (and the uint8 -> float conversion) on one
// 480x640 frame, in this thread: where the augmented sample's time goes. Each on a float image and on
// the uint8 frame (a video camera's path, as LeRobot augments it).
void per_transform_ms(int64_t h, int64_t w) {
  torch::manual_seed(1);
  const auto frame = (torch::rand({3, h, w}) * 255).to(torch::kUInt8);
  auto time_ms = [](auto&& fn) {
    fn();
    const int reps = 20;
    auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count() / reps;
  };
  const auto img = frame.to(torch::kFloat32).div_(255.0);
  std::printf("per call on one 3x%ldx%ld frame:\n", long(h), long(w));
  std::printf("  %-28s %6.2f ms\n", "uint8 -> float / 255", time_ms([&] { return frame.to(torch::kFloat32).div_(255.0); }));
  const Json tfs = default_image_transforms_tfs();
  TransformRng rng(3);
  for (auto it = tfs.begin(); it != tfs.end(); ++it) {
    auto t = make_image_transform(it.value()["type"].get<std::string>(), it.value()["kwargs"], it.key());
    const auto p = t->sample(rng, h, w);
    std::printf("  %-28s %6.2f ms float, %6.2f ms uint8\n",
                (it.key() + " (" + it.value()["type"].get<std::string>() + ")").c_str(),
                time_ms([&] { return t->apply(img, p); }), time_ms([&] { return t->apply_uint8(frame, p); }));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 20;
  const int workers = argc > 2 ? std::atoi(argv[2]) : 2;
  // As lerobot-cpp does at start (LEROBOT_CPP_HOST_ALLOCATOR=default measures glibc's defaults).
  const HostAllocatorTuning alloc = tune_host_allocator();
  const int64_t episodes = 4, frames = 50, h = 480, w = 640;
  const fs::path root = fs::temp_directory_path() / ("lerobot_bench_augment_" + std::to_string(::getpid()));
  fs::remove_all(root);
  {
    std::vector<FeatureSpec> feats{{"observation.state", "float32", {6}, Json(), Json()},
                                   {"action", "float32", {6}, Json(), Json()},
                                   {"observation.images.top", "video", {h, w, 3}, Json(), Json()}};
    DatasetWriter wr(root, 30, feats);
    torch::manual_seed(0);
    for (int64_t e = 0; e < episodes; ++e) {
      for (int64_t i = 0; i < frames; ++i) {
        torch::Tensor img = (torch::rand({h, w, 3}) * 64 + float(i % 50) * 3).to(torch::kUInt8);
        wr.add_frame({{"observation.state", torch::randn({6})}, {"action", torch::randn({6})},
                      {"observation.images.top", img}});
      }
      wr.save_episode("bench task");
    }
    wr.finalize();
  }
  auto ds = std::make_shared<LeRobotDataset>(root, LeRobotDatasetOptions{});
  std::printf("480x640 AV1, batch 8, %d workers, %d batches, intra-op threads %d\n", workers, batches,
              torch::get_num_threads());
  std::printf("host allocator: %s%s\n", alloc.applied ? "" : "glibc defaults: ", alloc.reason.c_str());
  per_transform_ms(h, w);
  // Off and on alternate, three rounds, medians: a machine whose load changes during the run
  // weighs on both sides alike.
  std::vector<double> offs, ons;
  for (int round = 0; round < 3; ++round) {
    offs.push_back(samples_per_s(ds, workers, batches, false));
    ons.push_back(samples_per_s(ds, workers, batches, true));
    std::printf("round %d: off %8.1f  on %8.1f samples/s  (%.2fx)\n", round + 1, offs.back(), ons.back(),
                ons.back() / offs.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double off = median(offs), on = median(ons);
  std::printf("augmentation off  %8.1f samples/s (median of 3)\n", off);
  std::printf("augmentation on   %8.1f samples/s (median of 3)  (%.2fx of off)\n", on, on / off);
  fs::remove_all(root);
  return 0;
}
