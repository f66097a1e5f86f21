// Tests for VideoEncoder + append_video: AV1 round trip, exact pts after concatenation, probe.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/common/thread_scheduling.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/video_concat.h"
#include "lerobot/io/video/video_decoder.h"
#include "lerobot/io/video/video_encoder.h"
#include "lerobot/io/video/video_probe.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

namespace fs = std::filesystem;
constexpr int kW = 64, kH = 64, kFps = 30;  // libsvtav1 needs at least 64x64

fs::path temp_dir(const std::string& name) {
  return lerobot::testing::fresh_temp_dir("video_" + name);
}

// Smooth moving gradients plus a soft disc whose position depends on (episode, k): HWC RGB.
std::vector<uint8_t> synth_frame(int episode, int k) {
  std::vector<uint8_t> f(size_t(kW) * kH * 3);
  double cx = 12 + 2.5 * k + 10 * episode, cy = 14 + 1.5 * k;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      double d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
      double disc = 120.0 * std::exp(-d2 / 60.0);
      uint8_t* p = &f[(size_t(y) * kW + x) * 3];
      p[0] = uint8_t(std::min(255.0, 40 + 2.0 * x + 3 * k + disc));
      p[1] = uint8_t(std::min(255.0, 30 + 3.0 * y + 40 * episode));
      p[2] = uint8_t(std::min(255.0, 200 - 1.5 * x - 1.0 * y + disc * 0.5));
    }
  }
  return f;
}

std::vector<uint8_t> to_chw_wh(const std::vector<uint8_t>& hwc, int w, int h) {
  std::vector<uint8_t> chw(hwc.size());
  const size_t plane = size_t(w) * h;
  for (size_t i = 0; i < plane; ++i)
    for (int c = 0; c < 3; ++c) chw[c * plane + i] = hwc[i * 3 + c];
  return chw;
}

std::vector<uint8_t> to_chw(const std::vector<uint8_t>& hwc) { return to_chw_wh(hwc, kW, kH); }

double mean_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(int(a[i]) - int(b[i]));
  return s / double(a.size());
}

void encode_episode(const fs::path& path, int episode, int n, PixelLayout layout) {
  VideoEncoder enc(path.string(), kW, kH, kFps);
  for (int k = 0; k < n; ++k) {
    std::vector<uint8_t> f = synth_frame(episode, k);
    if (layout == PixelLayout::kCHW) f = to_chw(f);
    enc.add_frame(f.data(), layout);
  }
  enc.finish();
  EXPECT_EQ(enc.frames_written(), n);
}

TEST(VideoEncode, TwoEpisodesAppendedDecodeBackExactly) {
  fs::path dir = temp_dir("append");
  const int n0 = 12, n1 = 9;
  encode_episode(dir / "ep0.mp4", 0, n0, PixelLayout::kHWC);
  encode_episode(dir / "ep1.mp4", 1, n1, PixelLayout::kCHW);
  const std::string dest = (dir / "file-000.mp4").string();

  VideoSpan s0 = append_video(dest, (dir / "ep0.mp4").string());
  EXPECT_DOUBLE_EQ(s0.from_timestamp, 0.0);
  EXPECT_NEAR(s0.to_timestamp, double(n0) / kFps, 1e-9);
  VideoSpan s1 = append_video(dest, (dir / "ep1.mp4").string());
  EXPECT_NEAR(s1.from_timestamp, double(n0) / kFps, 1e-9);
  EXPECT_NEAR(s1.to_timestamp, double(n0 + n1) / kFps, 1e-9);
  EXPECT_FALSE(fs::exists(dest + ".append.tmp.mp4"));

  VideoInfo info = probe_video(dest);
  EXPECT_EQ(info.codec, "av1");
  EXPECT_EQ(info.pix_fmt, "yuv420p");
  EXPECT_EQ(info.width, kW);
  EXPECT_EQ(info.height, kH);
  EXPECT_NEAR(info.fps, double(kFps), 1e-9);
  EXPECT_EQ(info.num_frames, n0 + n1);
  EXPECT_NEAR(info.duration_s, double(n0 + n1) / kFps, 1e-6);
  EXPECT_NEAR(video_stream_duration(dest), s1.to_timestamp, 1e-9);

  // Sequential decode: every frame at exactly k/fps, close to its source frame.
  VideoDecoder d(dest);
  EXPECT_EQ(d.decoder_name(), "libdav1d");
  RgbFrame f;
  int k = 0;
  while (d.next(f, PixelLayout::kHWC)) {
    ASSERT_LT(k, n0 + n1);
    EXPECT_NEAR(f.pts_s, double(k) / kFps, 1e-4) << "frame " << k;
    int ep = k < n0 ? 0 : 1;
    int local = k < n0 ? k : k - n0;
    EXPECT_LT(mean_abs_diff(f.data, synth_frame(ep, local)), 3.0) << "frame " << k;
    ++k;
  }
  EXPECT_EQ(k, n0 + n1);

  // LeRobot-style lookup of episode 1 frames: from_timestamp + frame_index / fps (float32).
  VideoDecoder d2(dest);
  std::vector<double> ts;
  for (int j : {0, 4, 8}) ts.push_back(s1.from_timestamp + double(float(j) / kFps));
  std::vector<RgbFrame> got = decode_frames_at(d2, ts, kDefaultFrameToleranceS, PixelLayout::kCHW);
  for (size_t i = 0; i < ts.size(); ++i) {
    int j = int(i) * 4;
    EXPECT_LT(mean_abs_diff(got[i].data, to_chw(synth_frame(1, j))), 3.0) << "ep1 frame " << j;
  }
  // Episode 0's frames differ from episode 1's (the lookup is not returning a constant image).
  EXPECT_GT(mean_abs_diff(got[0].data, to_chw(synth_frame(0, 0))), 10.0);
  fs::remove_all(dir);
}

TEST(VideoEncode, H264WithBFramesAndOddWidthRoundTrips) {
  // libx264 reorders frames (B-frames); a width that is not a multiple of 16 exercises the
  // conversion tails. Every frame must come back at k/fps in display order.
  fs::path dir = temp_dir("h264");
  const int w = 66, h = 50, n = 20;
  EncoderOptions opt;
  opt.codec = "libx264";
  opt.g = 8;
  opt.crf = 18;
  auto frame = [&](int k) {
    std::vector<uint8_t> f(size_t(w) * h * 3);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c)
          f[(size_t(y) * w + x) * 3 + c] = uint8_t(20 + x + y / 2 + 3 * k + 30 * c);
    return f;
  };
  const std::string path = (dir / "x264.mp4").string();
  {
    VideoEncoder enc(path, w, h, kFps, opt);
    for (int k = 0; k < n; ++k) enc.add_frame(frame(k).data());
    enc.finish();
  }
  VideoInfo info = probe_video(path);
  EXPECT_EQ(info.codec, "h264");
  EXPECT_EQ(info.num_frames, n);
  VideoDecoder d(path);
  std::vector<uint8_t> buf(d.frame_bytes());  // exact size: conversion must not overrun
  double pts = -1;
  int k = 0;
  while (d.next_into(buf.data(), PixelLayout::kHWC, &pts)) {
    EXPECT_NEAR(pts, double(k) / kFps, 1e-4) << "frame " << k;
    EXPECT_LT(mean_abs_diff(buf, frame(k)), 3.0) << "frame " << k;
    ++k;
  }
  EXPECT_EQ(k, n);
  VideoDecoder d2(path);
  std::vector<RgbFrame> got = decode_frames_at(d2, {13.0 / kFps, 2.0 / kFps});
  EXPECT_LT(mean_abs_diff(got[0].data, to_chw_wh(frame(13), w, h)), 3.0);
  EXPECT_LT(mean_abs_diff(got[1].data, to_chw_wh(frame(2), w, h)), 3.0);
  fs::remove_all(dir);
}

TEST(VideoEncode, AppendRejectsMismatchedVideo) {
  fs::path dir = temp_dir("mismatch");
  encode_episode(dir / "a.mp4", 0, 2, PixelLayout::kHWC);
  {
    VideoEncoder enc((dir / "b.mp4").string(), 96, 64, kFps);
    std::vector<uint8_t> frame(size_t(96) * 64 * 3, 128);
    enc.add_frame(frame.data());
    enc.finish();
  }
  const std::string dest = (dir / "a.mp4").string();
  EXPECT_THROW(append_video(dest, (dir / "b.mp4").string()), Error);
  EXPECT_EQ(probe_video(dest).num_frames, 2);  // destination untouched
  EXPECT_THROW(append_video(dest, (dir / "missing.mp4").string()), Error);
  fs::remove_all(dir);
}

TEST(VideoEncode, UnfinishedEncoderRemovesPartialFile) {
  fs::path dir = temp_dir("unfinished");
  const fs::path p = dir / "partial.mp4";
  {
    VideoEncoder enc(p.string(), kW, kH, kFps);
    std::vector<uint8_t> f = synth_frame(0, 0);
    enc.add_frame(f.data());
  }
  EXPECT_FALSE(fs::exists(p));
  EncoderOptions bad;
  bad.codec = "no-such-encoder";
  EXPECT_THROW(VideoEncoder((dir / "x.mp4").string(), kW, kH, kFps, bad), Error);
  EXPECT_THROW(VideoEncoder((dir / "y.mp4").string(), 64, 48, kFps), Error);  // below svtav1's min
  fs::remove_all(dir);
}

// SVT-AV1's init makes its caller SCHED_FIFO 99 when it may (as root: CI runs so); the encoder
// must leave every thread of the process on its normal policy, while it encodes and after.
TEST(VideoEncode, SvtAv1LeavesNoThreadRealTime) {
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  const fs::path dir = temp_dir("sched");
  {
    VideoEncoder enc((dir / "a.mp4").string(), kW, kH, kFps);
    for (int k = 0; k < 6; ++k) {
      enc.add_frame(synth_frame(0, k).data());
      EXPECT_TRUE(realtime_threads().empty()) << "frame " << k << ": " << thread_scheduling_name();
    }
    enc.finish();
  }
  EXPECT_EQ(thread_scheduling_name(), "SCHED_OTHER");
  EXPECT_TRUE(realtime_threads().empty());
}

}  // namespace
}  // namespace lerobot
