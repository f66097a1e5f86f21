// Internal: decoded YUV AVFrame -> uint8 RGB (HWC or CHW) with libswscale, honouring colour range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/io/video/ffmpeg_util.h"
#include "lerobot/io/video/video_decoder.h"

namespace lerobot::video_detail {

// Converts frames to rgb24 with swscale's unscaled path (what `ffmpeg -pix_fmt rgb24` and PyAV's
// to_ndarray("rgb24") use), so pixels match them. yuvj* formats and frames tagged
// AVCOL_RANGE_JPEG are treated as full range; the YCbCr matrix follows the frame's colorspace
// tag (BT.601 when unspecified). CHW output (and HWC when width % 32 != 0) goes through an
// rgb24 scratch buffer with padded rows.
class RgbConverter {
 public:
  void convert(const AVFrame* frame, uint8_t* dst, PixelLayout layout, const std::string& path);

 private:
  void configure(const AVFrame* frame, const std::string& path);

  SwsPtr sws_;
  int src_format_ = -1, width_ = 0, height_ = 0, full_range_ = -1, colorspace_ = -1;
  std::vector<uint8_t> scratch_;
  int scratch_linesize_ = 0;
};

// Splits interleaved rgb rows (linesize `src_linesize`) into three planes of width*height bytes.
void deinterleave_rgb(const uint8_t* src, int src_linesize, int width, int height, uint8_t* dst);

}  // namespace lerobot::video_detail
