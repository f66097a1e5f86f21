// decode_frames_at: nearest-pts frame lookup with keyframe seeks and forward-only sequential reads.
#include "lerobot/io/video/frame_lookup.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

std::string fmt_seconds(double s) {
  std::ostringstream os;
  os.precision(9);
  os << s;
  return os.str();
}

// Seeks so that the current frame is the first decoded one at or before q (within tolerance).
// A keyframe found by dts can present after q (B-frames); then seek further back and retry.
void seek_for(VideoDecoder& d, double q, double tol) {
  const double start = d.start_time();
  double target = q;
  double back = 0.5;
  while (true) {
    d.seek(target);
    if (!d.advance()) return;
    if (d.current_pts() <= q + tol || target <= start) return;
    target = std::max(start, q - back);
    back *= 2;
  }
}

// Moves the decoder so that (previous, current) bracket q as well as the stream allows.
void position_for(VideoDecoder& d, double q, double tol) {
  if (!d.has_current()) {
    seek_for(d, q, tol);
  } else {
    double earliest = d.has_previous() ? d.previous_pts() : d.current_pts();
    if (q < earliest - tol) {
      seek_for(d, q, tol);  // behind the decode position
    } else if (q > d.current_pts() + tol && !d.at_end()) {
      // Ahead: reseek only when a keyframe lies after the current frame and at or before q.
      double key = d.keyframe_at_or_before(q);
      if (key > d.current_pts() + tol) seek_for(d, q, tol);
    }
  }
  while (d.has_current() && d.current_pts() < q) {
    if (!d.advance()) break;
  }
}

}  // namespace

void decode_frames_at_into(VideoDecoder& decoder, const std::vector<double>& timestamps,
                           uint8_t* dst, double tolerance_s, PixelLayout layout,
                           std::vector<double>* pts_out) {
  const size_t n = timestamps.size();
  if (pts_out) pts_out->assign(n, 0.0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return timestamps[a] < timestamps[b]; });
  const size_t bytes = decoder.frame_bytes();
  for (size_t i : order) {
    const double q = timestamps[i];
    if (!std::isfinite(q)) {
      throw_usage("query timestamp is not finite", decoder.path(),
                  "check the episode's from_timestamp and the frame timestamps");
    }
    position_for(decoder, q, tolerance_s);
    if (!decoder.has_current()) {
      throw_data("no frame could be decoded near timestamp " + fmt_seconds(q) + " s",
                 decoder.path(), "the video may be empty or truncated; re-encode it");
    }
    bool use_previous = decoder.has_previous() &&
                        std::fabs(decoder.previous_pts() - q) < std::fabs(decoder.current_pts() - q);
    double pts = use_previous ? decoder.previous_pts() : decoder.current_pts();
    if (std::fabs(pts - q) > tolerance_s) {
      throw_data("no frame within tolerance_s=" + fmt_seconds(tolerance_s) + " of query timestamp " +
                     fmt_seconds(q) + " s; nearest decoded frame pts is " + fmt_seconds(pts) +
                     " s",
                 decoder.path(),
                 "check the dataset fps and the episode's from_timestamp in meta/episodes; "
                 "videos must hold one frame every 1/fps s (or raise tolerance_s)");
    }
    uint8_t* out = dst + i * bytes;
    if (use_previous) {
      decoder.convert_previous(out, layout);
    } else {
      decoder.convert_current(out, layout);
    }
    if (pts_out) (*pts_out)[i] = pts;
  }
}

std::vector<RgbFrame> decode_frames_at(VideoDecoder& decoder, const std::vector<double>& timestamps,
                                       double tolerance_s, PixelLayout layout) {
  const size_t n = timestamps.size();
  std::vector<uint8_t> all(n * decoder.frame_bytes());
  std::vector<double> pts;
  decode_frames_at_into(decoder, timestamps, all.data(), tolerance_s, layout, &pts);
  std::vector<RgbFrame> frames(n);
  const size_t bytes = decoder.frame_bytes();
  for (size_t i = 0; i < n; ++i) {
    frames[i].width = decoder.width();
    frames[i].height = decoder.height();
    frames[i].layout = layout;
    frames[i].pts_s = pts[i];
    frames[i].data.assign(all.begin() + i * bytes, all.begin() + (i + 1) * bytes);
  }
  return frames;
}

}  // namespace lerobot
