// Checks of what meta/ holds against info.json's features, run where each value is read
// (dataset_metadata.cpp): feature declarations, stats shapes (stats.json and each line of v2.1's
// episodes_stats.jsonl), episode frame ranges. Each throws a data error naming the file, the
// episode (when there is one) and the key, so that contradicting metadata never reaches LibTorch.
#pragma once

#include <exception>
#include <string>

#include "lerobot/datasets/dataset_metadata.h"

namespace lerobot {

// A JSON library error's text without its "[json.exception.<kind>.<id>] " tag.
std::string json_error_text(const std::exception& e);

// One entry of info.json "features": dtype a string, shape a list of positive integers (three for
// a camera), names null, a list or an object, info null or an object. `where`: the info.json path.
FeatureSpec feature_from_json(const std::string& key, const Json& f, const std::string& where);

// Number of colour channels of a camera feature (its shape in the layout its names give).
int64_t camera_channels(const FeatureSpec& f);

// The stats of each declared feature fit it: min/max/mean/std/q01..q99 hold the feature's number
// of values (a camera: one per channel), count one value, every value finite; each is then given
// its canonical shape (the feature's shape, a camera's (C, 1, 1), count's (1,)), so `0.5` and
// `[0.5]` aggregate alike. With `per_episode` (a line of episodes_stats.jsonl) mean, std, min, max
// and count >= 1 must be there, as their aggregation needs them. `where`: the file (and line and
// episode) the stats came from.
void fit_stats_to_features(const DatasetMetadata& m, DatasetStats& stats, const std::string& where, bool per_episode);

// Episodes are 0..N-1 (each once), each at least one frame long, their frame ranges
// [dataset_from_index, dataset_to_index) hold `length` frames and follow each other from 0, and
// their video spans are finite and not reversed. Names each episode's metadata file.
void check_episode_ranges(const DatasetMetadata& m);

}  // namespace lerobot
