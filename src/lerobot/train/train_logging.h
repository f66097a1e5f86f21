// Everything the training loop reports: the start banner, per-step meters, the periodic log line
// (reduced across ranks, printed by rank 0 to the console, JSONL and TensorBoard), the progress
// bar, warnings (input-bound, schedule horizon), in-training evaluation and the held-out loss.
// With --wandb.enable rank 0 also starts the W&B sidecar, which follows the JSONL file.
#pragma once

#include <memory>

#include "lerobot/train/metrics/device_sums.h"
#include "lerobot/train/metrics/metric_sinks.h"
#include "lerobot/train/metrics/metrics_tracker.h"
#include "lerobot/common/progress.h"
#include "lerobot/train/metrics/tensorboard.h"
#include "lerobot/train/metrics/wandb_sidecar.h"
#include "lerobot/train/update_step.h"

namespace lerobot {

struct TrainSetup;

inline constexpr const char* kMetricsJsonl = "train_metrics.jsonl";
inline constexpr const char* kTensorBoardDir = "tensorboard";

class TrainLogger {
 public:
  explicit TrainLogger(TrainSetup& setup);
  ~TrainLogger();
  void banner();
  void record(const UpdateResult& u, double data_s, double prep_s, double step_s);
  // Collective (reduces the meters across ranks). `caught_up_s`: how long the caller already waited
  // for the window's queued device work before calling (the non-finite check reads the device
  // first); it counts in the window's update_s and step_s with the wait for the sums.
  void log(int64_t step, double caught_up_s = 0.0);
  void evaluate(int64_t step);  // rank 0 runs the rollouts; all ranks meet after
  void heldout(int64_t step);   // collective: the held-out eval loss (--eval_steps), logged by rank 0
  void finish(int64_t step);

 private:
  void read_sums();    // the device sums into the meters (one host read)
  void start_wandb();  // rank 0: run id into the config, spec file, sidecar process

  TrainSetup& s_;
  MetricsTracker tracker_;
  std::unique_ptr<JsonlSink> jsonl_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::unique_ptr<ProgressBar> progress_;
  std::unique_ptr<WandBSidecar> wandb_;  // --wandb.enable, main process only
  DeviceSums device_sums_;
  int64_t skipped_ = 0;
  bool warned_input_bound_ = false;
};

}  // namespace lerobot
