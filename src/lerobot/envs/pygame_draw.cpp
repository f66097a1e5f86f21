// pygame 2.6.1's draw algorithms, reimplemented pixel for pixel (see pygame_draw.h).
//
// The arithmetic below follows pygame's exactly, including its choice of int, float and double at
// each step: the antialiased line works in single precision and the polygon fill in double, and a
// different precision or a fused multiply-add changes pixels. Keep expressions as they are.
#include "lerobot/envs/pygame_draw.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "lerobot/envs/exact_float.h"

namespace lerobot::pygame_draw {

void Surface::fill(Color c) {
  const int64_t n = static_cast<int64_t>(width_) * height_;
  for (int64_t i = 0; i < n; ++i) {
    rgb_[i * 3 + 0] = c[0];
    rgb_[i * 3 + 1] = c[1];
    rgb_[i * 3 + 2] = c[2];
  }
}

void Surface::hline(int x1, int y, int x2, Color c) {
  if (y < 0 || y >= height_) return;
  if (x2 < x1) std::swap(x1, x2);
  x1 = std::max(x1, 0);
  x2 = std::min(x2, width_ - 1);
  if (x2 < 0 || x1 >= width_) return;
  for (int x = x1; x <= x2; ++x) set(x, y, c);
}

namespace {

// ---------------------------------------------------------------------------------------------
// polygon: scanline fill over whole rows, intersections computed in double and truncated.

void fill_polygon(Surface& s, Color c, const std::vector<Point>& p) {
  const size_t n = p.size();
  double miny = p[0].y;
  double maxy = p[0].y;
  for (size_t i = 1; i < n; ++i) {
    miny = std::min(miny, static_cast<double>(p[i].y));
    maxy = std::max(maxy, static_cast<double>(p[i].y));
  }
  if (miny == maxy) {  // one row high: a single span from the leftmost to the rightmost point
    int minx = p[0].x;
    int maxx = p[0].x;
    for (size_t i = 1; i < n; ++i) {
      minx = std::min(minx, p[i].x);
      maxx = std::max(maxx, p[i].x);
    }
    s.hline(minx, static_cast<int>(miny), maxx, c);
    return;
  }
  std::vector<int> xs(n);
  for (double y = miny; y <= maxy; y++) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t prev = i ? i - 1 : n - 1;
      double x1, y1, x2, y2;
      if (p[prev].y < p[i].y) {
        x1 = p[prev].x, y1 = p[prev].y, x2 = p[i].x, y2 = p[i].y;
      } else if (p[prev].y > p[i].y) {
        x1 = p[i].x, y1 = p[i].y, x2 = p[prev].x, y2 = p[prev].y;
      } else {
        continue;  // horizontal edges are handled after the scan
      }
      // An edge covers rows [y1, y2); the bottom row also takes edges that end on it.
      if ((y >= y1 && y < y2) || (y == maxy && y2 == maxy)) {
        xs[k++] = static_cast<int>((y - y1) * (x2 - x1) / (y2 - y1) + x1);
      }
    }
    std::sort(xs.begin(), xs.begin() + k);
    for (size_t i = 0; i + 1 < k; i += 2) s.hline(xs[i], static_cast<int>(y), xs[i + 1], c);
  }
  // Horizontal edges strictly between the top and bottom rows can be a lower border that the scan
  // leaves out; draw them as they are.
  for (size_t i = 0; i < n; ++i) {
    const size_t prev = i ? i - 1 : n - 1;
    const double y = p[i].y;
    if (miny < y && p[prev].y == y && y < maxy) s.hline(p[i].x, static_cast<int>(y), p[prev].x, c);
  }
}

// ---------------------------------------------------------------------------------------------
// circle (filled): midpoint circle, spans drawn as the octant steps.

void fill_circle(Surface& s, Color c, int x0, int y0, int radius) {
  int f = 1 - radius;
  int ddf_x = 0;
  int ddf_y = -2 * radius;
  int x = 0;
  int y = radius;
  while (x < y) {
    if (f >= 0) {
      y--;
      ddf_y += 2;
      f += ddf_y;
    }
    x++;
    ddf_x += 2;
    f += ddf_x + 1;
    if (f >= 0) {  // y is about to step: the short rows at the top and bottom
      s.hline(x0 - x, y0 + y - 1, x0 + x - 1, c);
      s.hline(x0 - x, y0 - y, x0 + x - 1, c);
    }
    s.hline(x0 - y, y0 + x - 1, x0 + y - 1, c);
    s.hline(x0 - y, y0 - x, x0 + y - 1, c);
  }
}

// ---------------------------------------------------------------------------------------------
// lines: Bresenham segments, thickened by whole rows or columns.

int sign_or(int v, int if_zero) { return v > 0 ? 1 : (v < 0 ? -1 : if_zero); }

int round_away(double v) { return static_cast<int>(v < 0 ? v - 0.5 : v + 0.5); }

// Liang-Barsky clip of the segment to the surface; false when nothing of it is inside.
bool clip_line(const Surface& s, int* x1, int* y1, int* x2, int* y2) {
  const int p1 = *x1 - *x2;
  const int p2 = -p1;
  const int p3 = *y1 - *y2;
  const int p4 = -p3;
  const int q1 = *x1;
  const int q2 = s.width() - *x1;
  const int q3 = *y1;
  const int q4 = s.height() - *y1;
  const int ox = *x1;
  const int oy = *y1;
  double nmax = 0;
  double pmin = 1;
  if ((p1 == 0 && q1 < 0) || (p2 == 0 && q2 < 0) || (p3 == 0 && q3 < 0) || (p4 == 0 && q4 < 0)) {
    return false;
  }
  // One axis: p is minus its delta, qa and qb the distances to its low and high edges.
  auto narrow = [&](int p, int qa, int qb) {
    if (!p) return;
    const double r1 = static_cast<double>(qa) / p;
    const double r2 = static_cast<double>(qb) / -p;
    const double enter = p < 0 ? r1 : r2, leave = p < 0 ? r2 : r1;
    if (enter > nmax) nmax = enter;
    if (leave < pmin) pmin = leave;
  };
  narrow(p1, q1, q2);
  narrow(p3, q3, q4);
  if (nmax > pmin) return false;
  *x1 = ox + round_away(p2 * nmax);
  *y1 = oy + round_away(p4 * nmax);
  *x2 = ox + round_away(p2 * pmin);
  *y2 = oy + round_away(p4 * pmin);
  return true;
}

// One pixel wide Bresenham line, both ends included.
void thin_line(Surface& s, Color c, int x1, int y1, int x2, int y2) {
  if (x1 == x2 && y1 == y2) {
    s.set(x1, y1, c);
    return;
  }
  if (y1 == y2) {
    const int step = x1 < x2 ? 1 : -1;
    for (int i = 0; i <= std::abs(x1 - x2); ++i) s.set(x1 + step * i, y1, c);
    return;
  }
  if (x1 == x2) {
    const int step = y1 < y2 ? 1 : -1;
    for (int i = 0; i <= std::abs(y1 - y2); ++i) s.set(x1, y1 + step * i, c);
    return;
  }
  const int dx = std::abs(x2 - x1), sx = x1 < x2 ? 1 : -1;
  const int dy = std::abs(y2 - y1), sy = y1 < y2 ? 1 : -1;
  int err = (dx > dy ? dx : -dy) / 2;
  while (x1 != x2 || y1 != y2) {
    s.set(x1, y1, c);
    const int e2 = err;
    if (e2 > -dx) {
      err -= dy;
      x1 += sx;
    }
    if (e2 < dy) {
      err += dx;
      y1 += sy;
    }
  }
  s.set(x2, y2, c);
}

// A segment `width` pixels thick: the Bresenham walk of the clipped segment draws a row span
// (mostly vertical lines) or a column span (mostly horizontal lines) at each step. The error
// term starts from the unclipped segment, and after the clipped end the walk goes on towards
// the original end while the span still touches the surface.
void wide_line(Surface& s, Color c, int x1, int y1, int x2, int y2, int width) {
  const int end_x = x2;
  const int end_y = y2;
  const bool xinc = std::abs(x1 - x2) <= std::abs(y1 - y2);  // thickness along x
  const int dx = std::abs(x2 - x1);
  const int sx = x1 < x2 ? 1 : -1;
  const int dy = std::abs(y2 - y1);
  const int sy = y1 < y2 ? 1 : -1;
  int err = (dx > dy ? dx : -dy) / 2;
  if (!clip_line(s, &x1, &y1, &x2, &y2)) return;
  if (width == 1) {
    thin_line(s, c, x1, y1, x2, y2);
    return;
  }
  const int base = xinc ? x1 : y1;
  int lo = base - (width - 1) / 2;
  int hi = base + width / 2;
  auto column = [&](int x) {
    for (int y = lo; y <= hi; ++y) s.set(x, y, c);
  };
  while (sign_or(x1 - x2, sx) != sx || sign_or(y1 - y2, sy) != sy) {
    if (xinc) {
      s.hline(lo, y1, hi, c);
    } else {
      column(x1);
    }
    const int e2 = err;
    if (e2 > -dx) {
      err -= dy;
      x1 += sx;
      if (xinc) lo += sx, hi += sx;
    }
    if (e2 < dy) {
      err += dx;
      y1 += sy;
      if (!xinc) lo += sy, hi += sy;
    }
  }
  if (xinc) {
    while (y1 != end_y && (s.inside(lo, y1) || s.inside(hi, y1))) {
      s.hline(lo, y1, hi, c);
      const int e2 = err;
      if (e2 > -dx) {
        err -= dy;
        x1 += sx;
        lo += sx;
        hi += sx;
      }
      if (e2 < dy) {
        err += dx;
        y1 += sy;
      }
    }
    s.hline(lo, y1, hi, c);
  } else {
    while (x1 != end_x && (s.inside(x1, lo) || s.inside(x1, hi))) {
      column(x1);
      const int e2 = err;
      if (e2 > -dx) {
        err -= dy;
        x1 += sx;
      }
      if (e2 < dy) {
        err += dx;
        y1 += sy;
        lo += sy;
        hi += sy;
      }
    }
    column(x1);
  }
}

// ---------------------------------------------------------------------------------------------
// aalines: Xiaolin Wu lines in single precision, blended over the current pixels.

// Float to uint8 as x86 code compiled from C does it: truncate to a 32-bit int, keep the low byte.
uint8_t to_u8(float v) { return static_cast<uint8_t>(static_cast<int>(v)); }

// Plots (x, y) at `brightness` of colour c over the pixel already there.
void blend_pixel(Surface& s, Color c, int x, int y, float brightness) {
  if (!s.inside(x, y)) return;
  const Color bg = s.get(x, y);
  Color out;
  for (int k = 0; k < 3; ++k) {
    out[k] = to_u8(brightness * c[k] + (1 - brightness) * bg[k]);
  }
  s.set(x, y, out);
}

void aaline(Surface& s, Color c, float from_x, float from_y, float to_x, float to_y) {
  float dx = to_x - from_x;
  float dy = to_y - from_y;
  if (std::fabs(static_cast<double>(dx)) < 0.0001 && std::fabs(static_cast<double>(dy)) < 0.0001) {
    const int px = static_cast<int>(std::floor(from_x + 0.5));
    const int py = static_cast<int>(std::floor(from_y + 0.5));
    blend_pixel(s, c, px, py, 1);
    return;
  }
  // Clip one pixel wider than the surface so border pixels get their partial coverage.
  float clip_left = static_cast<float>(0) - 1.0f;
  float clip_right = clip_left + static_cast<float>(s.width()) + 1.0f;
  float clip_top = static_cast<float>(0) - 1.0f;
  float clip_bottom = clip_top + static_cast<float>(s.height()) + 1.0f;

  const bool steep = std::fabs(static_cast<double>(dx)) < std::fabs(static_cast<double>(dy));
  if (steep) {
    std::swap(from_x, from_y);
    std::swap(to_x, to_y);
    std::swap(dx, dy);
    std::swap(clip_left, clip_top);
    std::swap(clip_right, clip_bottom);
  }
  if (dx < 0) {
    std::swap(from_x, to_x);
    std::swap(from_y, to_y);
    dx = -dx;
    dy = -dy;
  }
  if (to_x <= clip_left || from_x >= clip_right) return;

  const float gradient = dy / dx;
  if (from_x < clip_left) {
    from_y += gradient * (clip_left - from_x);
    from_x = clip_left;
  }
  if (to_x > clip_right) {
    to_y += gradient * (clip_right - to_x);
    to_x = clip_right;
  }
  if (gradient > 0.0f) {
    if (to_y <= clip_top || from_y >= clip_bottom) return;
    if (from_y < clip_top) {
      from_x += (clip_top - from_y) / gradient;
      from_y = clip_top;
    }
    if (to_y > clip_bottom) {
      to_x += (clip_bottom - to_y) / gradient;
      to_y = clip_bottom;
    }
  } else {
    if (from_y <= clip_top || to_y >= clip_bottom) return;
    if (to_y < clip_top) {
      to_x += (clip_top - to_y) / gradient;
      to_y = clip_top;
    }
    if (from_y > clip_bottom) {
      from_x += (clip_bottom - from_y) / gradient;
      from_y = clip_bottom;
    }
  }
  // Shifted down one pixel so that truncation floors; pixels are plotted one row higher.
  from_y += 1.0f;
  to_y += 1.0f;

  // Plots the two pixels of an end point (minor coordinate `yf`, major `xm`) at coverage x_gap.
  auto end_point = [&](int xm, float yf, float x_gap) {
    float brightness = yf - static_cast<float>(static_cast<int>(yf));
    int x, y;
    if (steep) {
      x = static_cast<int>(yf);
      y = xm;
    } else {
      x = xm;
      y = static_cast<int>(yf);
    }
    if (static_cast<float>(static_cast<int>(yf)) < yf) blend_pixel(s, c, x, y, brightness * x_gap);
    if (steep) {
      x--;
    } else {
      y--;
    }
    brightness = 1 - brightness;
    blend_pixel(s, c, x, y, brightness * x_gap);
  };

  int x_start = static_cast<int>(from_x);
  float intersect_y = from_y + gradient * (static_cast<float>(x_start) - from_x);
  if (to_x > clip_left + 1.0f) {
    const float x_gap = static_cast<float>(1 + x_start) - from_x;
    end_point(x_start, intersect_y, x_gap);
    intersect_y += gradient;
    x_start++;
  }
  const int x_end = static_cast<int>(std::ceil(static_cast<double>(to_x)));
  if (from_x < clip_right - 1.0f) {
    const float y_end = to_y + gradient * (static_cast<float>(x_end) - to_x);
    const float x_gap = static_cast<float>(1 - x_end) + to_x;
    end_point(x_end, y_end, x_gap);
  }
  for (int x = x_start; x < x_end; x++) {
    const int y = static_cast<int>(intersect_y);
    float brightness = (1 - intersect_y) + static_cast<float>(y);
    if (steep) {
      blend_pixel(s, c, y - 1, x, brightness);
      if (static_cast<float>(y) < intersect_y) blend_pixel(s, c, y, x, 1 - brightness);
    } else {
      blend_pixel(s, c, x, y - 1, brightness);
      if (static_cast<float>(y) < intersect_y) blend_pixel(s, c, x, y, 1 - brightness);
    }
    intersect_y += gradient;
  }
}

}  // namespace

void polygon(Surface& s, Color c, const std::vector<Point>& points) {
  if (points.size() < 3) return;
  fill_polygon(s, c, points);
}

void circle(Surface& s, Color c, Point center, int radius) {
  if (radius < 1) return;
  if (center.x > s.width() + radius || center.x < -radius || center.y > s.height() + radius ||
      center.y < -radius) {
    return;
  }
  fill_circle(s, c, center.x, center.y, radius);
}

void lines(Surface& s, Color c, const std::vector<Point>& points, int width) {
  if (points.size() < 2 || width < 1) return;
  for (size_t i = 1; i < points.size(); ++i) {
    wide_line(s, c, points[i - 1].x, points[i - 1].y, points[i].x, points[i].y, width);
  }
}

void aalines(Surface& s, Color c, const std::vector<std::array<double, 2>>& points) {
  if (points.size() < 2) return;
  for (size_t i = 1; i < points.size(); ++i) {
    aaline(s, c, static_cast<float>(points[i - 1][0]), static_cast<float>(points[i - 1][1]),
           static_cast<float>(points[i][0]), static_cast<float>(points[i][1]));
  }
}

}  // namespace lerobot::pygame_draw
