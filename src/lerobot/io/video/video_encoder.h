// VideoEncoder: RGB uint8 frames -> mp4 with LeRobot's defaults (libsvtav1, yuv420p, g=2, crf=30).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "lerobot/io/video/video_decoder.h"

namespace lerobot {

// Mirrors LeRobot's RGB VideoEncoderConfig defaults (info.json video.g / crf / preset / ...).
struct EncoderOptions {
  std::string codec = "libsvtav1";  // FFmpeg encoder name (libsvtav1, libx264, libx265, libaom-av1)
  std::string pix_fmt = "yuv420p";
  int g = 2;                        // GOP: a keyframe every g frames
  int crf = 30;
  int preset = 12;                  // numeric preset for libsvtav1 (ignored by other encoders)
  int fast_decode = 0;              // svtav1-params fast-decode=<n>
  int threads = 0;                  // encoder threads (svtav1 lp=); 0 = encoder default
  bool faststart = true;            // movflags=faststart (moov atom first)
  std::map<std::string, std::string> extra_options;  // passed to avcodec_open2 as-is
};

// Writes frames to `path` (an .mp4). Frame k gets pts k in a 1/fps time base, i.e. timestamp
// exactly k/fps. Frames are RGB uint8, width*height*3 bytes, CHW or HWC. finish() must be called
// to write the file; if the encoder is destroyed unfinished the partial file is removed.
class VideoEncoder {
 public:
  VideoEncoder(std::string path, int width, int height, int fps, EncoderOptions options = {});
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  void add_frame(const uint8_t* rgb, PixelLayout layout = PixelLayout::kHWC);
  void finish();
  int64_t frames_written() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lerobot
