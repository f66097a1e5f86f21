// Video file checks against info.json (see video_checks.h).
#include "lerobot/datasets/video_checks.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/video_decoder.h"

namespace lerobot {

std::pair<int64_t, int64_t> camera_height_width(const FeatureSpec& f) {
  if (f.shape.size() != 3) return {0, 0};
  if (f.names.is_array() && f.names.size() == 3 && f.names[0].is_string()) {
    const std::string n = f.names[0].get<std::string>();
    if (n == "channels" || n == "channel") return {f.shape[1], f.shape[2]};
  }
  return {f.shape[0], f.shape[1]};
}

std::vector<std::string> video_stream_problems(const DatasetMetadata& meta, const std::string& key, const VideoInfo& vi) {
  std::vector<std::string> out;
  const FeatureSpec* f = meta.find_feature(key);
  if (f == nullptr) return out;
  const auto [h, w] = camera_height_width(*f);
  if (h > 0 && (vi.height != h || vi.width != w))
    out.push_back("camera '" + key + "' video is " + std::to_string(vi.width) + "x" + std::to_string(vi.height) +
                  " but info.json says " + std::to_string(w) + "x" + std::to_string(h));
  if (vi.fps > 0 && std::fabs(vi.fps - double(meta.fps)) > 0.01 * double(meta.fps))
    out.push_back("camera '" + key + "' video runs at " + std::to_string(vi.fps) + " fps but info.json says fps " +
                  std::to_string(meta.fps));
  return out;
}

void check_video_streams(const DatasetMetadata& meta, int64_t first_episode) {
  if (first_episode < 0 || first_episode >= static_cast<int64_t>(meta.episodes.size())) return;
  const EpisodeInfo& e = meta.episodes[first_episode];
  for (const auto& key : meta.video_keys()) {
    auto it = e.videos.find(key);
    if (it == e.videos.end()) continue;
    const fs::path path = meta.root / it->second.file;
    if (!fs::exists(path)) continue;  // named by the decoder with the episode and frame
    const auto problems = video_stream_problems(meta, key, probe_video(path.string()));
    if (!problems.empty())
      throw_data(problems.front(), path.string(),
                 "re-encode the video to match info.json, or fix meta/info.json (check with lerobot-cpp dataset validate)");
  }
}

std::optional<std::string> undecodable_frame(const fs::path& file, double timestamp_s, double tolerance_s) {
  try {
    VideoDecoder dec(file.string());
    decode_frames_at(dec, {timestamp_s}, tolerance_s);
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.problem());
  }
}

}  // namespace lerobot
