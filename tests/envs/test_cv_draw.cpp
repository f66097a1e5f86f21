// cv_line / cv_draw_marker_cross against OpenCV 4.6 itself: 1,636 drawings recorded with cv2.line and
// cv2.drawMarker (scripts/pusht_reference/make_cv_draw_reference.py), each compared pixel for pixel.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "lerobot/envs/cv_draw.h"

namespace lerobot {
namespace {

const std::string kData = std::string(LEROBOT_SOURCE_DIR) + "/tests/envs/data/";

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The painted-pixel mask of one case, unpacked from numpy.packbits order.
std::vector<uint8_t> reference_mask(const std::string& blob, size_t offset, size_t size, size_t pixels) {
  std::vector<uint8_t> packed((pixels + 7) / 8);
  uLongf n = packed.size();
  EXPECT_EQ(uncompress(packed.data(), &n, reinterpret_cast<const Bytef*>(blob.data() + offset), size), Z_OK);
  EXPECT_EQ(n, packed.size());
  std::vector<uint8_t> mask(pixels);
  for (size_t i = 0; i < pixels; ++i) mask[i] = (packed[i / 8] >> (7 - i % 8)) & 1;
  return mask;
}

TEST(CvDraw, LinesAndCrossMarkersMatchOpenCVPixelForPixel) {
  const auto ref = nlohmann::json::parse(read_bytes(kData + "cv_draw_reference.json"));
  const std::string blob = read_bytes(kData + "cv_draw_reference.bin");
  int cases = 0, thick = 0, clipped = 0, failing = 0;
  int64_t painted = 0;
  for (const auto& c : ref.at("cases")) {
    const int kind = c[0], h = c[1], w = c[2], ch = c[3], thickness = c[4];
    const std::vector<int> args = c[5];
    const std::vector<uint8_t> color = c[6];
    const auto want = reference_mask(blob, c[7].get<size_t>(), c[8].get<size_t>(), static_cast<size_t>(h) * w);
    std::vector<uint8_t> img(static_cast<size_t>(h) * w * ch, 0);
    const CvImageU8 view{img.data(), h, w, ch};
    if (kind == 0)
      cv_line(view, args[0], args[1], args[2], args[3], color.data(), thickness);
    else
      cv_draw_marker_cross(view, args[0], args[1], color.data(), args[2], thickness);

    int64_t differing = 0, wrong_colour = 0, count = 0;
    for (size_t p = 0; p < want.size(); ++p) {
      bool any = false, exact = true;
      for (int k = 0; k < ch; ++k) {
        any = any || img[p * ch + k] != 0;
        exact = exact && img[p * ch + k] == color[k];
      }
      differing += any != (want[p] != 0);
      wrong_colour += any && !exact;
      count += any;
    }
    EXPECT_EQ(count, c[9].get<int64_t>()) << "case " << c.dump();
    EXPECT_EQ(differing, 0) << "case " << c.dump();
    EXPECT_EQ(wrong_colour, 0) << "case " << c.dump();
    failing += differing > 0 || wrong_colour > 0;
    ++cases;
    thick += thickness > 1;
    bool outside = false;
    for (size_t k = 0; k + 1 < args.size(); k += 2) outside = outside || args[k] < 0 || args[k] >= w || args[k + 1] < 0 || args[k + 1] >= h;
    clipped += outside;
    painted += count;
  }
  std::cout << cases << " drawings (" << thick << " thicker than 1 pixel, " << clipped
            << " with a point outside the image), " << painted << " painted pixels; " << failing
            << " differ from OpenCV " << ref.at("opencv").get<std::string>() << "\n";
  EXPECT_EQ(cases, 1636);
  EXPECT_GT(thick, 800);
  EXPECT_GT(clipped, 400);
}

TEST(CvDraw, ThicknessOutsideOpenCVsRangeIsRefused) {
  std::vector<uint8_t> img(16 * 16 * 3, 0);
  const uint8_t red[3] = {255, 0, 0};
  EXPECT_THROW(cv_line({img.data(), 16, 16, 3}, 0, 0, 5, 5, red, -1), std::invalid_argument);
  EXPECT_THROW(cv_line({img.data(), 16, 16, 3}, 0, 0, 5, 5, red, 32768), std::invalid_argument);
  // Thickness 0 draws the one-pixel line (later OpenCV 4.x; 4.6 asserts thickness > 0).
  cv_line({img.data(), 16, 16, 3}, 0, 0, 5, 0, red, 0);
  int painted = 0;
  for (size_t i = 0; i < img.size(); i += 3) painted += img[i] == 255;
  EXPECT_EQ(painted, 6);
}

}  // namespace
}  // namespace lerobot
