// VideoDecoder: decodes an mp4 (AV1 via libdav1d, H.264, HEVC) to uint8 RGB frames, CHW or HWC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lerobot {

// Memory layout of an RGB frame: planar (C,H,W) like LeRobot tensors, or interleaved (H,W,C).
enum class PixelLayout { kCHW, kHWC };

// One decoded frame: 3*height*width bytes of uint8 RGB in `layout`, at `pts_s` seconds.
struct RgbFrame {
  int width = 0;
  int height = 0;
  PixelLayout layout = PixelLayout::kCHW;
  double pts_s = 0.0;
  std::vector<uint8_t> data;
};

struct DecoderOptions {
  int threads = 1;           // decoder threads; 0 = one per core
  bool prefer_dav1d = true;  // use libdav1d for AV1 when FFmpeg has it
};

// One open video stream. Not thread-safe: use one decoder from one thread at a time
// (DecoderCache hands out decoders that way). Timestamps are pts × time_base in the file's
// timeline (start_time is not subtracted), as LeRobot's pyav/torchcodec backends report them.
class VideoDecoder {
 public:
  // Throws lerobot::Error (kData) naming `path` if it is missing, unreadable or has no video.
  explicit VideoDecoder(std::string path, DecoderOptions options = {});
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  const std::string& path() const;
  int width() const;
  int height() const;
  double fps() const;                    // average frame rate of the stream
  const std::string& decoder_name() const;  // e.g. "libdav1d", "h264"
  int threads() const;
  size_t frame_bytes() const { return size_t(3) * width() * height(); }
  // Rough bytes held by this decoder (reference frames, thread buffers, scratch).
  size_t memory_estimate() const;

  // Sequential decoding in presentation order. Returns false at the end of the stream.
  bool next(RgbFrame& out, PixelLayout layout = PixelLayout::kCHW);
  // Same, writing frame_bytes() bytes into `dst` (caller-owned).
  bool next_into(uint8_t* dst, PixelLayout layout, double* pts_s = nullptr);

  // ---- Cursor API (used by decode_frames_at) ----
  // Seeks to the keyframe at or before `ts_s`; the next advance() returns a frame from there.
  void seek(double ts_s);
  // Decodes the next frame; the frame that was current becomes `previous`. False at the end.
  bool advance();
  bool has_current() const;
  bool has_previous() const;
  double current_pts() const;
  double previous_pts() const;
  bool at_end() const;
  // Timestamp (s) of the indexed keyframe at or before ts_s, or -1 if the index does not say.
  double keyframe_at_or_before(double ts_s) const;
  double start_time() const;  // first pts in seconds (0 for LeRobot files)
  int64_t seek_count() const;  // seeks done so far (sequential lookups should not add any)
  // Converts the current / previous frame into `dst` (frame_bytes() bytes).
  void convert_current(uint8_t* dst, PixelLayout layout);
  void convert_previous(uint8_t* dst, PixelLayout layout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lerobot
