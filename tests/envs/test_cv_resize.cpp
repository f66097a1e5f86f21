// Tests of cv_resize_linear_u8 against cv2.resize (INTER_LINEAR) outputs stored in tests/envs/data/.
// The stored bytes and checksums come from scripts/pusht_reference/make_cv_resize_reference.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "lerobot/envs/cv_resize.h"

namespace lerobot {
namespace {

const std::string kResizeData = std::string(LEROBOT_SOURCE_DIR) + "/tests/envs/data/";

// The generator's input image: gradients, a checkerboard, a disc and sawtooth wraps (integers only).
std::vector<uint8_t> pattern(int h, int w, int c) {
  std::vector<uint8_t> img(static_cast<size_t>(h) * w * c);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int k = 0; k < c; ++k) {
        int64_t v = 0;
        switch (k % 4) {
          case 0:
            v = static_cast<int64_t>(x) * 255 / std::max(w - 1, 1);
            break;
          case 1: {
            v = ((x / 37 + y / 23) % 2) * 255;
            const int64_t dx = 2 * x - w, dy = 2 * y - h, r = std::min(h, w) * 3 / 5;
            if (dx * dx + dy * dy < r * r) v = 200;
            break;
          }
          case 2:
            v = (x * 3 + y * 7) & 255;
            break;
          default:
            v = (x ^ y) & 255;
        }
        img[(static_cast<size_t>(y) * w + x) * c + k] = static_cast<uint8_t>(v);
      }
    }
  }
  return img;
}

std::vector<uint8_t> resize(int sh, int sw, int c, int dh, int dw) {
  const std::vector<uint8_t> src = pattern(sh, sw, c);
  std::vector<uint8_t> dst(static_cast<size_t>(dh) * dw * c);
  cv_resize_linear_u8(src.data(), sh, sw, c, dst.data(), dh, dw);
  return dst;
}

size_t count_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) n += a[i] != b[i];
  return n;
}

uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

struct Stored {
  int sh, sw, c, dh, dw;
};

// 512->96 is gym_pusht's observation; the others cover upscaling, 4 and 1 channels, mixed directions
// and the exact halving OpenCV serves with its 2x2 box filter.
TEST(CvResizeTest, MatchesStoredOpenCvOutputsByteForByte) {
  const Stored cases[] = {{512, 512, 3, 96, 96},
                          {48, 64, 3, 130, 170},
                          {61, 97, 4, 23, 30},
                          {70, 50, 1, 121, 37},
                          {64, 64, 3, 32, 32}};
  for (const Stored& s : cases) {
    const std::string name = "cv_resize_" + std::to_string(s.sh) + "x" + std::to_string(s.sw) + "x" +
                             std::to_string(s.c) + "_to_" + std::to_string(s.dh) + "x" +
                             std::to_string(s.dw) + ".bin";
    std::ifstream f(kResizeData + name, std::ios::binary);
    ASSERT_TRUE(f.good()) << "missing " << kResizeData + name;
    const std::vector<uint8_t> want((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::vector<uint8_t> got = resize(s.sh, s.sw, s.c, s.dh, s.dw);
    ASSERT_EQ(got.size(), want.size()) << name;
    const size_t differing = count_diff(got, want);
    EXPECT_EQ(differing, 0u) << name << ": " << differing << " of " << want.size() << " bytes differ";
  }
}

TEST(CvResizeTest, MatchesOpenCvChecksumsForThePushTVisualisationSizes) {
  struct Hashed {
    int sh, sw, c, dh, dw;
    uint64_t fnv;
  };
  const Hashed cases[] = {{512, 512, 3, 384, 384, 0x934200955cd3c964ull},
                          {512, 512, 3, 680, 680, 0x8f3e8e352b8397aeull}};
  for (const Hashed& h : cases) {
    EXPECT_EQ(fnv1a64(resize(h.sh, h.sw, h.c, h.dh, h.dw)), h.fnv)
        << h.sh << "x" << h.sw << " -> " << h.dh << "x" << h.dw;
  }
}

TEST(CvResizeTest, SameSizeCopiesAndConstantImagesStayConstant) {
  const std::vector<uint8_t> src = pattern(33, 21, 3);
  std::vector<uint8_t> dst(src.size());
  cv_resize_linear_u8(src.data(), 33, 21, 3, dst.data(), 33, 21);
  EXPECT_EQ(dst, src);
  const int sizes[][2] = {{96, 96}, {7, 13}, {700, 300}, {1, 1}};
  for (const auto& s : sizes) {
    const std::vector<uint8_t> flat(512 * 512 * 4, 173);
    std::vector<uint8_t> out(static_cast<size_t>(s[0]) * s[1] * 4);
    cv_resize_linear_u8(flat.data(), 512, 512, 4, out.data(), s[0], s[1]);
    const size_t differing = count_diff(out, std::vector<uint8_t>(out.size(), 173));
    EXPECT_EQ(differing, 0u) << s[0] << "x" << s[1] << ": " << differing << " bytes differ";
  }
  EXPECT_THROW(cv_resize_linear_u8(src.data(), 0, 21, 3, dst.data(), 5, 5), std::invalid_argument);
}

}  // namespace
}  // namespace lerobot
