// Action statistics in relative space, as LeRobot 0.6.2's compute_relative_action_stats
// (what `lerobot-edit-dataset --operation.type recompute_stats --operation.relative_action true`
// writes): every chunk of `chunk_size` consecutive frames that lies within one episode, each of its
// actions minus the chunk's FIRST frame's observation.state on the masked dimensions, and the stats
// of all those rows (a frame counts once per chunk it is in). The mask is the caller's (the
// policies layer builds it: RelativeActions::mask), so this layer names no policy.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "lerobot/datasets/dataset_metadata.h"

namespace lerobot {

// Frame indices s (0-based, in the order of `episode_index`) whose chunk [s, s + chunk_size) lies in
// one episode: episode_index[s] == episode_index[s + chunk_size - 1], as LeRobot checks it.
std::vector<int64_t> valid_chunk_starts(const std::vector<int64_t>& episode_index, int64_t chunk_size);

// The rows the stats are taken over: (starts * chunk_size, A), chunk by chunk, float32 as LeRobot's.
// actions (N, A), states (N, S) with S >= A; relative[d] says whether dimension d is made relative.
torch::Tensor relative_action_rows(const torch::Tensor& actions, const torch::Tensor& states,
                                   const std::vector<int64_t>& starts, int64_t chunk_size,
                                   const std::vector<bool>& relative);

// min/max/mean/std/count (float64 sums; LeRobot's RunningQuantileStats sums in float32) and
// q01..q99 through LeRobot's own histogram estimator (histogram_quantiles.h), fed the rows in its
// batches of 50 000 chunks, so they equal LeRobot's rather than the exact sample quantiles. Throws a data error
// naming --chunk_size when no chunk fits in an episode, and one naming observation.state when the
// state is narrower than the action.
FeatureStats compute_relative_action_stats(const torch::Tensor& actions, const torch::Tensor& states,
                                           const std::vector<int64_t>& episode_index, int64_t chunk_size,
                                           const std::vector<bool>& relative);

}  // namespace lerobot
