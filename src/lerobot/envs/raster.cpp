// Canvas: filled circles, rings and convex polygons sampled at pixel centres.
#include "lerobot/envs/raster.h"

#include <algorithm>
#include <cmath>

namespace lerobot {

void Canvas::fill(Rgb c) {
  for (int r = 0; r < size_; ++r)
    for (int q = 0; q < size_; ++q) put(r, q, c);
}

namespace {
// Pixel index range whose centres (i + 0.5) / size lie in [lo, hi] (world units).
void pixel_range(float lo, float hi, int size, int& first, int& last) {
  first = std::max(0, static_cast<int>(std::ceil(lo * size - 0.5f)));
  last = std::min(size - 1, static_cast<int>(std::floor(hi * size - 0.5f)));
}
}  // namespace

void Canvas::circle(Vec2f c, float radius, Rgb color) { ring(c, radius, radius, color); }

void Canvas::ring(Vec2f c, float radius, float thickness, Rgb color) {
  int r0, r1, q0, q1;
  pixel_range(c.y - radius, c.y + radius, size_, r0, r1);
  pixel_range(c.x - radius, c.x + radius, size_, q0, q1);
  const float outer = radius * radius;
  const float in = std::max(0.0f, radius - thickness);
  const float inner = in * in;
  const float inv = 1.0f / size_;
  for (int r = r0; r <= r1; ++r) {
    const float dy = (r + 0.5f) * inv - c.y;
    for (int q = q0; q <= q1; ++q) {
      const float dx = (q + 0.5f) * inv - c.x;
      const float d2 = dx * dx + dy * dy;
      if (d2 <= outer && (thickness >= radius || d2 >= inner)) put(r, q, color);
    }
  }
}

void Canvas::convex_polygon(const Vec2f* in, int n, Rgb color) {
  if (n < 3) return;
  // Walk the vertices counter-clockwise (in x-right, y-down axes: positive area) so both windings
  // evaluate the very same edge functions and fill the very same pixels.
  std::vector<Vec2f> p(in, in + n);
  float area2 = 0.0f;
  for (int i = 0; i < n; ++i) area2 += p[i].x * p[(i + 1) % n].y - p[(i + 1) % n].x * p[i].y;
  if (area2 < 0.0f) std::reverse(p.begin(), p.end());
  float xmin = p[0].x, xmax = p[0].x, ymin = p[0].y, ymax = p[0].y;
  for (int i = 0; i < n; ++i) {
    xmin = std::min(xmin, p[i].x);
    xmax = std::max(xmax, p[i].x);
    ymin = std::min(ymin, p[i].y);
    ymax = std::max(ymax, p[i].y);
  }
  int r0, r1, q0, q1;
  pixel_range(ymin, ymax, size_, r0, r1);
  pixel_range(xmin, xmax, size_, q0, q1);
  const float inv = 1.0f / size_;
  for (int r = r0; r <= r1; ++r) {
    const float y = (r + 0.5f) * inv;
    for (int q = q0; q <= q1; ++q) {
      const float x = (q + 0.5f) * inv;
      bool inside = true;
      for (int i = 0; i < n && inside; ++i) {
        const Vec2f& a = p[i];
        const Vec2f& b = p[(i + 1) % n];
        const float cross = (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
        inside = cross >= 0.0f;
      }
      if (inside) put(r, q, color);
    }
  }
}

void Canvas::square(Vec2f c, float h, float angle, Rgb color) {
  const float cs = std::cos(angle), sn = std::sin(angle);
  const float corners[4][2] = {{-h, -h}, {h, -h}, {h, h}, {-h, h}};
  Vec2f pts[4];
  for (int i = 0; i < 4; ++i) {
    pts[i].x = c.x + cs * corners[i][0] - sn * corners[i][1];
    pts[i].y = c.y + sn * corners[i][0] + cs * corners[i][1];
  }
  convex_polygon(pts, 4, color);
}

}  // namespace lerobot
