// bench_loader: writes a 2-camera AV1 dataset (10 episodes x 100 frames, 96x96) with DatasetWriter
// into a temp dir, then measures DataLoader samples/s (batch 8, ACT-like action offsets 0..99)
// with 0, 1 and 2 workers, and prints the ratios against 0 workers.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "lerobot/datasets/data_loader.h"
#include "lerobot/datasets/dataset_writer.h"

using namespace lerobot;

int main(int argc, char** argv) {
  const int64_t episodes = 10, frames = 100, hw = 96;
  const int batches = argc > 1 ? std::atoi(argv[1]) : 40;
  const fs::path root = fs::temp_directory_path() / ("lerobot_bench_loader_" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto t0 = std::chrono::steady_clock::now();
  {
    std::vector<FeatureSpec> feats{{"observation.state", "float32", {6}, Json(), Json()},
                                   {"action", "float32", {6}, Json(), Json()},
                                   {"observation.images.top", "video", {hw, hw, 3}, Json(), Json()},
                                   {"observation.images.wrist", "video", {hw, hw, 3}, Json(), Json()}};
    DatasetWriter w(root, 30, feats);
    torch::manual_seed(0);
    for (int64_t e = 0; e < episodes; ++e) {
      for (int64_t i = 0; i < frames; ++i) {
        torch::Tensor img = (torch::rand({hw, hw, 3}) * 64 + float(i % 50) * 3).to(torch::kUInt8);
        w.add_frame({{"observation.state", torch::randn({6})}, {"action", torch::randn({6})},
                     {"observation.images.top", img}, {"observation.images.wrist", 255 - img}});
      }
      w.save_episode("bench task");
    }
    w.finalize();
  }
  const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote %lld frames x 2 cameras (%lldx%lld AV1) in %.2f s\n", (long long)(episodes * frames),
              (long long)hw, (long long)hw, write_s);
  LeRobotDatasetOptions o;
  for (int64_t k = 0; k < 100; ++k) o.delta_indices["action"].push_back(k);
  auto ds = std::make_shared<LeRobotDataset>(root, o);
  double base = 0;
  for (int workers : {0, 1, 2}) {
    DataLoaderOptions lo;
    lo.batch_size = 8;
    lo.num_workers = workers;
    lo.prefetch_factor = 4;
    lo.seed = 1000;
    DataLoader loader(ds, lo);
    loader.next();  // warm-up (opens decoders, starts workers)
    auto t = std::chrono::steady_clock::now();
    for (int b = 0; b < batches; ++b) loader.next();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    const double rate = batches * 8 / s;
    if (workers == 0) base = rate;
    std::printf("workers=%d  %8.1f samples/s  (%.2fx vs 0 workers)\n", workers, rate, rate / base);
  }
  fs::remove_all(root);
  return 0;
}
