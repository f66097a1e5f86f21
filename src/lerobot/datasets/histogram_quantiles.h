// Quantiles as LeRobot 0.6.2's RunningQuantileStats estimates them (compute_stats.py), so that
// stats it writes through that class (the relative-action stats) come out as LeRobot's: per
// dimension a histogram of `bins` equal bins between the running min and max (float32 edges, as
// numpy's linspace gives for float32 ends), re-binned by old bin centres whenever a later batch
// widens the range, and a quantile read off the cumulative counts with linear interpolation inside
// the bin where the target count q * N falls. With sparse tails this is not the exact sample
// quantile (compute_array_stats'): the two differ by up to the gap between neighbouring samples.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace lerobot {

class HistogramQuantiles {
 public:
  explicit HistogramQuantiles(int64_t bins = 5000) : bins_(bins) {}
  // A batch (M, D) of float32 rows; batches must be given in LeRobot's order for equal results.
  void update(const torch::Tensor& batch);
  // Quantile q of every dimension: (D) float64.
  torch::Tensor quantile(double q) const;
  int64_t count() const { return count_; }

 private:
  void rebin();  // the range grew: old counts move to the new bin holding their old bin's centre
  int64_t bins_;
  int64_t count_ = 0;
  std::vector<float> min_, max_;
  std::vector<std::vector<float>> edges_;   // per dimension, bins_ + 1
  std::vector<std::vector<double>> hist_;   // per dimension, bins_
};

}  // namespace lerobot
