// DataLoader: worker threads fetch dataset items for a BatchPlan, collate them into batches and
// hand them out in plan order through a bounded prefetch queue (LeRobot's torch DataLoader).
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lerobot/datasets/image_transforms.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/sampler.h"

namespace lerobot {

// Tensors stacked along a leading batch dim: (B, ...); "<key>_is_pad" (B, T).
struct DataBatch {
  std::map<std::string, torch::Tensor> tensors;
  std::vector<std::string> tasks;    // one per sample
  std::vector<int64_t> indices;      // global frame indices, in batch order
  int64_t step = 0;                  // 0-based position in this loader's sequence (+ start_step)
};

struct DataLoaderOptions {
  int64_t batch_size = 8;
  int num_workers = 4;       // 0: load in the calling thread
  int prefetch_factor = 4;   // queue holds prefetch_factor * num_workers batches
  int64_t world_size = 1;
  int64_t rank = 0;
  int64_t start_step = 0;    // resume: the first batch is the one of this training step
  // The batch size and process count that trained start_step, when a resume changes them; 0: the
  // loader's own.
  int64_t start_batch_size = 0, start_world_size = 0;
  uint64_t seed = 0;         // cfg.seed (0 if null)
  bool shuffle = true;
  int64_t drop_n_first_frames = 0;
  int64_t drop_n_last_frames = 0;  // policy.drop_n_last_frames (Diffusion 7)
  int pin_memory = -1;       // -1: when CUDA is available; 0 / 1 force
  // next() logs a warning each time it has waited this long for one batch, naming the frame each
  // worker is on and for how long (a stalled disk or network file, a stuck decode); <= 0: never.
  double stall_report_s = 60.0;
  // Training augmentation, per camera and sample in the worker threads (cameras become float in
  // [0, 1]); null or inactive: cameras stay as the dataset returns them.
  std::shared_ptr<const ImageTransforms> image_transforms;
};

// A camera to augment: its key and whether it is a video (LeRobot augments a video camera's uint8
// frames, an image camera's float ones; see image_transforms.h).
struct AugmentedCamera {
  std::string key;
  bool video = false;
};

// Applies `transforms` to every camera of `item`, with a random source seeded by (seed, rank, step,
// position in the batch, camera). A video camera's uint8 frames are augmented as uint8, an image
// camera's are made float in [0, 1] first; both come out float in [0, 1] (x / 255 after uint8).
void augment_item(DatasetItem& item, const std::vector<AugmentedCamera>& cameras, const ImageTransforms& transforms,
                  uint64_t seed, int64_t rank, int64_t step, int64_t position);

// The dataset's cameras, each marked video or not.
std::vector<AugmentedCamera> augmented_cameras(const LeRobotDataset& dataset);

// Stacks items into a batch (all items must have the same keys and shapes).
DataBatch collate(const std::vector<DatasetItem>& items);

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const LeRobotDataset> dataset, DataLoaderOptions options);
  ~DataLoader();  // stops and joins the workers
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // The next batch (endless: epochs follow one another). A worker's failure is rethrown here as a
  // lerobot::Error naming the episode, frame and file.
  DataBatch next();
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  int64_t num_samples() const { return num_samples_; }  // sampler length (per epoch, all ranks)
  const DataLoaderOptions& options() const { return options_; }

 private:
  struct Slot {
    bool ready = false;
    DataBatch batch;
    std::exception_ptr error;
  };
  // What a worker is loading: the frame (-1: none) and since when (steady_now_ns()).
  struct Activity {
    std::atomic<int64_t> frame{-1};
    std::atomic<int64_t> since_ns{0};
  };
  DataBatch load(int64_t k, const std::vector<int64_t>& indices, Activity* activity = nullptr) const;
  void worker_loop(Activity& activity);
  std::string stall_report(int64_t k, double waited_s) const;

  std::shared_ptr<const LeRobotDataset> dataset_;
  DataLoaderOptions options_;
  std::unique_ptr<BatchPlan> plan_;
  int64_t batches_per_epoch_ = 0;
  int64_t num_samples_ = 0;
  std::vector<AugmentedCamera> cameras_;  // the dataset's, for augment_item
  bool pin_ = false;

  std::mutex mutex_;
  std::condition_variable produced_, consumed_;
  std::map<int64_t, Slot> slots_;
  int64_t next_claim_ = 0;    // next batch number a worker takes
  int64_t next_consume_ = 0;  // next batch number next() returns
  bool stop_ = false;
  std::vector<std::thread> workers_;
  std::unique_ptr<Activity[]> activity_;  // one per worker
};

}  // namespace lerobot
