// Tests for VideoDecoder / decode_frames_at / probe_video on a real LeRobot H.264 mp4 fixture.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/video_decoder.h"
#include "lerobot/io/video/video_probe.h"

namespace lerobot {
namespace {

const std::string kName = "h264-640x480-10fps-93frames.mp4";
const std::string kDecodeFixture = std::string(LEROBOT_FIXTURES_DIR) + "/video/" + kName;

std::vector<RgbFrame> decode_all(const std::string& path, PixelLayout layout, int threads = 1) {
  VideoDecoder d(path, DecoderOptions{threads});
  std::vector<RgbFrame> frames;
  RgbFrame f;
  while (d.next(f, layout)) frames.push_back(f);
  return frames;
}

// The fixture decoded once, sequentially, in CHW (shared by several tests).
const std::vector<RgbFrame>& sequential_chw() {
  static const std::vector<RgbFrame> frames = decode_all(kDecodeFixture, PixelLayout::kCHW);
  return frames;
}

TEST(VideoDecode, FixtureSequentialGives93FramesAtTenthsOfSeconds) {
  VideoDecoder d(kDecodeFixture);
  EXPECT_EQ(d.width(), 640);
  EXPECT_EQ(d.height(), 480);
  EXPECT_NEAR(d.fps(), 10.0, 1e-9);
  const std::vector<RgbFrame>& frames = sequential_chw();
  ASSERT_EQ(frames.size(), 93u);
  for (size_t k = 0; k < frames.size(); ++k) {
    EXPECT_EQ(frames[k].data.size(), size_t(3) * 480 * 640);
    EXPECT_EQ(frames[k].width, 640);
    EXPECT_EQ(frames[k].height, 480);
    EXPECT_NEAR(frames[k].pts_s, double(k) / 10.0, 1e-4) << "frame " << k;
  }
  // Frames differ from each other (the video is not a still image).
  EXPECT_NE(frames.front().data, frames.back().data);
}

TEST(VideoDecode, FullRangeMatchesFfmpegCliRgb24) {
  // `ffmpeg -pix_fmt rgb24` converts yuvj420p as full range; so must we.
  std::string cmd = "ffmpeg -v error -i '" + kDecodeFixture + "' -frames:v 3 -f rawvideo -pix_fmt rgb24 -";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  const size_t bytes = size_t(640) * 480 * 3;
  std::vector<uint8_t> ref(3 * bytes);
  size_t got = fread(ref.data(), 1, ref.size(), p);
  pclose(p);
  ASSERT_EQ(got, ref.size()) << "ffmpeg CLI output was short; is ffmpeg installed?";
  VideoDecoder d(kDecodeFixture);
  std::vector<RgbFrame> ours(3);
  for (auto& f : ours) ASSERT_TRUE(d.next(f, PixelLayout::kHWC));
  for (int k = 0; k < 3; ++k) {
    double sum = 0;
    int max_diff = 0;
    for (size_t i = 0; i < bytes; ++i) {
      int diff = std::abs(int(ours[k].data[i]) - int(ref[k * bytes + i]));
      sum += diff;
      max_diff = std::max(max_diff, diff);
    }
    EXPECT_LT(sum / bytes, 0.05) << "frame " << k;
    EXPECT_LE(max_diff, 2) << "frame " << k;
  }
}

TEST(VideoDecode, ChwIsTheTransposeOfHwc) {
  VideoDecoder d(kDecodeFixture);
  ASSERT_TRUE(d.advance());
  std::vector<uint8_t> hwc(d.frame_bytes()), chw(d.frame_bytes());
  d.convert_current(hwc.data(), PixelLayout::kHWC);
  d.convert_current(chw.data(), PixelLayout::kCHW);
  const int h = 480, w = 640;
  for (int y = 0; y < h; y += 7) {
    for (int x = 0; x < w; x += 5) {
      for (int c = 0; c < 3; ++c) {
        ASSERT_EQ(chw[size_t(c) * h * w + size_t(y) * w + x], hwc[(size_t(y) * w + x) * 3 + c]);
      }
    }
  }
}

TEST(VideoDecode, RandomAccessMatchesSequentialDecoding) {
  const std::vector<RgbFrame>& seq = sequential_chw();
  ASSERT_EQ(seq.size(), 93u);
  VideoDecoder d(kDecodeFixture);
  std::vector<double> ts = {4.0, 0.3, 9.2, 4.1, 0.0, 4.0, 7.7, 4.6, 4.7, 4.8};
  std::vector<RgbFrame> got = decode_frames_at(d, ts);
  ASSERT_EQ(got.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    size_t k = size_t(std::lround(ts[i] * 10));
    EXPECT_NEAR(got[i].pts_s, ts[i], 1e-4);
    EXPECT_EQ(got[i].data, seq[k].data) << "query " << ts[i];
  }
  // A later call going backwards reseeks and still matches.
  // Around the second keyframe (pts 4.7; B-frames make its dts earlier), one query per call.
  for (double t : {4.5, 4.6, 4.7, 4.8}) {
    VideoDecoder fresh(kDecodeFixture);
    EXPECT_EQ(decode_frames_at(fresh, {t})[0].data, seq[size_t(std::lround(t * 10))].data) << t;
  }
  std::vector<RgbFrame> back = decode_frames_at(d, {1.5, 1.6});
  EXPECT_EQ(back[0].data, seq[15].data);
  EXPECT_EQ(back[1].data, seq[16].data);
}

TEST(VideoDecode, SequentialLookupsDoNotReseek) {
  const std::vector<RgbFrame>& seq = sequential_chw();
  VideoDecoder d(kDecodeFixture);
  for (int k = 30; k < 60; ++k) {
    // float32-rounded timestamps, as stored in LeRobot parquet files.
    double ts = double(float(k / 10.0));
    std::vector<RgbFrame> f = decode_frames_at(d, {ts});
    ASSERT_EQ(f[0].data, seq[k].data) << "frame " << k;
  }
  EXPECT_EQ(d.seek_count(), 1);  // only the first lookup seeks
}

TEST(VideoDecode, MultiThreadedDecoderGivesSamePixels) {
  const std::vector<RgbFrame>& one = sequential_chw();
  std::vector<RgbFrame> all = decode_all(kDecodeFixture, PixelLayout::kCHW, 0);
  ASSERT_EQ(one.size(), all.size());
  for (size_t k = 0; k < one.size(); k += 10) {
    EXPECT_EQ(one[k].data, all[k].data);
    EXPECT_EQ(one[k].pts_s, all[k].pts_s);
  }
}

TEST(VideoDecode, TimestampBetweenFramesThrowsNamingFileAndNearestPts) {
  VideoDecoder d(kDecodeFixture);
  try {
    decode_frames_at(d, {0.05});
    FAIL() << "expected lerobot::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    std::string what = e.what();
    EXPECT_NE(what.find(kName), std::string::npos) << what;
    EXPECT_NE(what.find("0.05"), std::string::npos) << what;
    EXPECT_NE(what.find("nearest decoded frame pts is 0"), std::string::npos) << what;
  }
  // Within tolerance is fine; beyond the last frame is not.
  EXPECT_NO_THROW(decode_frames_at(d, {0.10005}));
  EXPECT_THROW(decode_frames_at(d, {9.3}), Error);
  // A looser tolerance accepts the in-between timestamp.
  EXPECT_NO_THROW(decode_frames_at(d, {0.05}, 0.06));
}

TEST(VideoDecode, MissingFileErrorNamesIt) {
  const std::string missing = "/nonexistent/dir/cam_front_missing.mp4";
  try {
    VideoDecoder d(missing);
    FAIL() << "expected lerobot::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("cam_front_missing.mp4"), std::string::npos);
  }
  EXPECT_THROW(probe_video(missing), Error);
}

TEST(VideoProbe, FixtureFacts) {
  VideoInfo info = probe_video(kDecodeFixture);
  EXPECT_EQ(info.codec, "h264");
  EXPECT_EQ(info.width, 640);
  EXPECT_EQ(info.height, 480);
  EXPECT_NEAR(info.fps, 10.0, 1e-9);
  EXPECT_EQ(info.pix_fmt, "yuvj420p");
  EXPECT_TRUE(info.full_range);
  EXPECT_EQ(info.num_frames, 93);
  EXPECT_NEAR(info.duration_s, 9.3, 1e-6);
  EXPECT_EQ(info.channels, 3);
  EXPECT_FALSE(info.has_audio);
}

}  // namespace
}  // namespace lerobot
