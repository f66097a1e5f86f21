// Checks of a dataset's video files against meta/info.json: resolution and frame rate (a file
// that contradicts them would be decoded into frames the policy does not expect), and whether
// the last frame a file must hold can really be decoded (a truncated file cannot).
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/io/video/video_probe.h"

namespace lerobot {

// (height, width) of a camera feature: info.json names say where the channels are; (H, W, C)
// when they do not. (0, 0) unless the shape is 3-D.
std::pair<int64_t, int64_t> camera_height_width(const FeatureSpec& f);

// Problems of camera `key`'s video `vi` against info.json (size vs the feature's shape, frame rate
// vs the dataset's fps). Empty: consistent.
std::vector<std::string> video_stream_problems(const DatasetMetadata& meta, const std::string& key, const VideoInfo& vi);

// Probes the first selected episode's video of every camera and throws a data error naming the
// file at the first contradiction with info.json. Missing files are left to the decoder.
void check_video_streams(const DatasetMetadata& meta, int64_t first_episode);

// Decodes the frame at `timestamp_s` (the last one the file must hold); the error text, or
// nullopt when it decodes.
std::optional<std::string> undecodable_frame(const fs::path& file, double timestamp_s, double tolerance_s);

}  // namespace lerobot
