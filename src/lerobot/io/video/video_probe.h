// probe_video: stream facts of an mp4 (codec, size, fps, pix_fmt, frames, duration) for info.json.
#pragma once

#include <cstdint>
#include <string>

namespace lerobot {

struct VideoInfo {
  std::string codec;       // canonical codec name: "av1", "h264", "hevc" (info.json video.codec)
  int width = 0;           // video.width
  int height = 0;          // video.height
  double fps = 0.0;        // average frame rate (video.fps is its integer value)
  int fps_num = 0, fps_den = 1;
  std::string pix_fmt;     // e.g. "yuv420p", "yuvj420p" (video.pix_fmt)
  int channels = 3;        // video.channels
  int64_t num_frames = 0;  // from the container, or counted packet by packet when it is absent
  double duration_s = 0.0; // stream duration × time_base (container duration as a fallback)
  bool has_audio = false;
  bool full_range = false; // yuvj* or color_range tagged "pc"
};

// Throws lerobot::Error (kData) naming `path` if it is missing or has no video stream.
VideoInfo probe_video(const std::string& path);

}  // namespace lerobot
