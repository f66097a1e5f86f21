// Statistics as LeRobot computes them (compute_stats.py): per-episode min/max/mean/std/count and
// quantiles, aggregation across episodes, and sampled camera-frame statistics.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/datasets/dataset_metadata.h"

namespace lerobot {

inline constexpr const char* kQuantileStats[] = {"q01", "q10", "q50", "q90", "q99"};

// One episode's column of a numeric feature from `root`'s parquet: (length, D) float32 for vectors,
// (length) float32 for float scalars, (length) int64 otherwise.
torch::Tensor read_episode_column(const fs::path& root, const FeatureSpec& feature, const EpisodeInfo& episode);

// Stats of `values` (N, ...) reduced over dim 0 (vectors: shape (D); scalars: shape (1)).
// Quantiles are exact (linear interpolation) rather than LeRobot's 5000-bin histogram estimate.
FeatureStats compute_array_stats(const torch::Tensor& values, bool with_quantiles = true);

// Camera stats from uint8 frames (N, C, H, W): per channel, values / 255, shapes (C,1,1);
// frames whose long side is >= 300 px are strided down to about 150 px first (as LeRobot).
FeatureStats compute_image_stats(const torch::Tensor& frames_uint8, bool with_quantiles = true);

// LeRobot's estimate_num_samples / sample_indices: evenly spaced frame indices of an episode.
std::vector<int64_t> sample_frame_indices(int64_t episode_length);

// Count-weighted mean, pooled variance, global min/max, quantile envelope (min for <= q50,
// max above). Each element of `per_episode` maps stat -> tensor for one feature.
FeatureStats aggregate_feature_stats(const std::vector<FeatureStats>& per_episode);
DatasetStats aggregate_stats(const std::vector<DatasetStats>& per_episode);

}  // namespace lerobot
