// Tests of the software rasteriser and the seeded random numbers used by the simulated tasks.
#include <gtest/gtest.h>

#include <cmath>

#include "lerobot/envs/raster.h"

namespace lerobot {
namespace {

int count(const std::vector<uint8_t>& img, Rgb c) {
  int n = 0;
  for (size_t i = 0; i < img.size(); i += 3) n += img[i] == c[0] && img[i + 1] == c[1] && img[i + 2] == c[2];
  return n;
}

TEST(RasterTest, ShapesCoverTheirAreaAndWindingDoesNotMatter) {
  const int s = 200;
  std::vector<uint8_t> a(s * s * 3), b(s * s * 3);
  Canvas ca(a.data(), s), cb(b.data(), s);
  ca.fill({0, 0, 0});
  cb.fill({0, 0, 0});
  ca.circle({0.5f, 0.5f}, 0.2f, {255, 0, 0});
  const double circle_px = M_PI * 0.2 * 0.2 * s * s;
  EXPECT_NEAR(count(a, {255, 0, 0}), circle_px, 0.02 * circle_px);
  const Vec2f ccw[3] = {{0.1f, 0.1f}, {0.9f, 0.1f}, {0.1f, 0.9f}};
  const Vec2f cw[3] = {{0.1f, 0.1f}, {0.1f, 0.9f}, {0.9f, 0.1f}};
  ca.fill({0, 0, 0});
  ca.convex_polygon(ccw, 3, {0, 255, 0});
  cb.convex_polygon(cw, 3, {0, 255, 0});
  EXPECT_EQ(a, b);
  const double tri_px = 0.5 * 0.8 * 0.8 * s * s;
  EXPECT_NEAR(count(a, {0, 255, 0}), tri_px, 0.02 * tri_px);
  // A rotated square keeps its area; shapes are clipped at the image border.
  ca.fill({0, 0, 0});
  ca.square({0.5f, 0.5f}, 0.1f, 0.6f, {0, 0, 255});
  EXPECT_NEAR(count(a, {0, 0, 255}), 0.04 * s * s, 0.03 * 0.04 * s * s);
  ca.fill({0, 0, 0});
  ca.circle({0.0f, 0.0f}, 0.2f, {9, 9, 9});
  EXPECT_NEAR(count(a, {9, 9, 9}), circle_px / 4, 0.03 * circle_px);
}

TEST(RasterTest, SeededRngIsReproducibleAndUniform) {
  SeededRng a(42), b(42), c(43);
  double sum = 0;
  bool differs = false;
  for (int i = 0; i < 10000; ++i) {
    const double x = a.uniform();
    EXPECT_EQ(x, b.uniform());
    differs |= x != c.uniform();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_TRUE(differs);
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

}  // namespace
}  // namespace lerobot
