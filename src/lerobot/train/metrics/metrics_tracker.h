// AverageMeter and MetricsTracker with LeRobot's semantics and console format
// (utils/logging_utils.py): running averages over a log window, samples/episodes/epochs
// accounting, and cross-rank reduction through a caller-supplied collective.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/strings.h"  // format_big_number

namespace lerobot {

enum class ReduceKind { kNone, kMean, kMax, kSum };
const char* reduce_kind_name(ReduceKind kind);  // "none", "mean", "max", "sum"

// Python's format(value, spec) for the specs meters use: ":f", ":.3f", ":.0f", ":0.1e", ...
// (an optional width, a precision, and f/e/g; nan/inf spelled as Python does).
std::string format_python(double value, const std::string& spec);


class AverageMeter {
 public:
  AverageMeter(std::string name, std::string fmt = ":f", ReduceKind reduction = ReduceKind::kNone);
  void reset();
  void update(double value, double n = 1.0);
  // Adds `total` to the window's sum without adding a sample: time the window spent that no single
  // update saw (a GPU still running the window's steps when the log line reads their values).
  void spread(double total);
  // "name:avg" with the meter's format.
  std::string to_string() const;

  const std::string& name() const { return name_; }
  const std::string& fmt() const { return fmt_; }
  ReduceKind reduction() const { return reduction_; }
  double val = 0.0, avg = 0.0, sum = 0.0, count = 0.0;

 private:
  std::string name_;
  std::string fmt_;
  ReduceKind reduction_;
};

// Reduces `values` in place across every rank with the given kind (a collective: every rank calls
// it with the same sizes in the same order). Supplied by the distributed layer.
using ReduceFn = std::function<void(std::vector<float>& values, ReduceKind kind)>;

class MetricsTracker {
 public:
  // samples = steps × batch_size × world_size; episodes = samples / (num_frames / num_episodes);
  // epochs = samples / num_frames.
  MetricsTracker(int64_t batch_size, int64_t num_frames, int64_t num_episodes,
                 int64_t initial_step = 0, int64_t world_size = 1);

  // Registers a meter under `key` (display order = registration order). Re-adding a key throws.
  AverageMeter& add_meter(const std::string& key, AverageMeter meter);
  bool has(const std::string& key) const;
  AverageMeter& meter(const std::string& key);  // throws for an unknown key
  // meter(key).update(value).
  void update(const std::string& key, double value, double n = 1.0);
  // A policy output value: registered on first use as (key, ":.3f", mean), never replacing a
  // train-loop meter of the same key.
  void update_output(const std::string& key, double value, double n = 1.0);

  void step();  // one more optimizer step (micro-batch)
  void reduce_across_ranks(const ReduceFn& reduce);
  void reset_averages();

  // "step:<big> smpl:<big> ep:<big> epch:<.2f> <meter> <meter> ..."
  std::string to_string() const;
  // {"steps", "samples", "episodes", "epochs", <key>: avg ...}
  Json to_dict() const;

  int64_t steps() const { return steps_; }
  int64_t samples() const { return samples_; }
  double episodes() const { return episodes_; }
  double epochs() const { return epochs_; }

 private:
  void refresh();
  // Meter i is a policy output none of this window's steps gave (left out of the line and record).
  bool absent_output(size_t i) const;
  int64_t samples_per_step_;
  double num_frames_;
  double avg_samples_per_ep_;
  int64_t steps_ = 0;
  int64_t samples_ = 0;
  double episodes_ = 0.0;
  double epochs_ = 0.0;
  std::vector<std::string> keys_;
  std::vector<AverageMeter> meters_;
  std::set<std::string> output_keys_;  // meters of update_output: left out of a window without them
};

// The train loop's meters (LeRobot's lerobot_train.py): loss (mean), grad_norm "grdn", lr,
// update_s "updt_s" (max), dataloading_s "data_s" (max), preprocessing_s "prep_s" (max),
// step_s "step_s" (max), samples_per_s "smp/s" (":.0f"), and gpu_mem_gb
// "mem_gb" (max) when `cuda`.
void add_default_train_meters(MetricsTracker& tracker, bool cuda);

}  // namespace lerobot
