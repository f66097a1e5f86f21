// decode_frames_at: LeRobot's timestamp -> frame lookup (seek to keyframe, decode, nearest pts).
#pragma once

#include <cstdint>
#include <vector>

#include "lerobot/io/video/video_decoder.h"

namespace lerobot {

constexpr double kDefaultFrameToleranceS = 1e-4;

// Returns one frame per query timestamp (seconds, file timeline), in query order. Each query is
// matched to the decoded frame with the closest pts; if |pts - query| > tolerance_s for any
// query, throws lerobot::Error (kData) naming the file, the query and the nearest pts.
// Queries may be in any order and repeat. The decoder keeps its position between calls, so
// sequential access (the next query just ahead of the last) decodes forward without reseeking;
// it seeks only backwards or when a keyframe lies between the position and the query.
std::vector<RgbFrame> decode_frames_at(VideoDecoder& decoder, const std::vector<double>& timestamps,
                                       double tolerance_s = kDefaultFrameToleranceS,
                                       PixelLayout layout = PixelLayout::kCHW);

// Same, into caller memory: `dst` holds timestamps.size() * decoder.frame_bytes() bytes, frame i
// at offset i * frame_bytes(). If `pts_out` is given it receives the matched pts (seconds).
void decode_frames_at_into(VideoDecoder& decoder, const std::vector<double>& timestamps,
                           uint8_t* dst, double tolerance_s = kDefaultFrameToleranceS,
                           PixelLayout layout = PixelLayout::kCHW,
                           std::vector<double>* pts_out = nullptr);

}  // namespace lerobot
