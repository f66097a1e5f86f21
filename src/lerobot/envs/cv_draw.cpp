// cv2.line / cv2.drawMarker with LINE_8: the same integer and fixed-point steps as OpenCV 4.x's
// drawing code (imgproc/src/drawing.cpp), so every pixel lands where OpenCV puts it.
#include "lerobot/envs/exact_float.h"
// (first: OpenCV rounds every product; the thick line's offset must not be fused)

#include "lerobot/envs/cv_draw.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <stdexcept>
#include <utility>

namespace lerobot {
namespace {

// OpenCV's drawing fixed point: 16 fractional bits.
constexpr int kShift = 16;
constexpr int64_t kOne = int64_t{1} << kShift;
constexpr int64_t kHalf = kOne >> 1;

struct Pt {
  int64_t x, y;
};

// Right shifts of negative values floor, as OpenCV relies on (GCC and Clang shift arithmetically).
inline int64_t floor_shift(int64_t v) { return v >> kShift; }

// cvRound: to nearest, ties to even (the SSE conversion under the default rounding mode).
inline int64_t cv_round(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

inline void put(const CvImageU8& img, int64_t x, int64_t y, const uint8_t* color) {
  std::memcpy(img.data + (static_cast<size_t>(y) * static_cast<size_t>(img.width) + static_cast<size_t>(x)) *
                             static_cast<size_t>(img.channels),
              color, static_cast<size_t>(img.channels));
}

inline bool inside(const CvImageU8& img, int64_t x, int64_t y) {
  return x >= 0 && x < img.width && y >= 0 && y < img.height;
}

// Pixels x1..x2 (inclusive) of row y; the caller keeps them inside the image.
void hline(const CvImageU8& img, int64_t y, int64_t x1, int64_t x2, const uint8_t* color) {
  for (int64_t x = x1; x <= x2; ++x) put(img, x, y, color);
}

// OpenCV's clipLine: Cohen-Sutherland against [0, w-1] x [0, h-1] in integer arithmetic, both ends
// moved in place (the second end's move uses the first end's new position). False when the
// segment misses the box.
bool clip_line(int64_t w, int64_t h, Pt& a, Pt& b) {
  if (w <= 0 || h <= 0) return false;
  const int64_t right = w - 1, bottom = h - 1;
  auto outcode = [&](const Pt& p) {
    return static_cast<int>(p.x < 0) + static_cast<int>(p.x > right) * 2 + static_cast<int>(p.y < 0) * 4 +
           static_cast<int>(p.y > bottom) * 8;
  };
  auto x_outcode = [&](const Pt& p) { return static_cast<int>(p.x < 0) + static_cast<int>(p.x > right) * 2; };
  int ca = outcode(a), cb = outcode(b);
  if ((ca & cb) == 0 && (ca | cb) != 0) {
    if (ca & 12) {  // a is above or below: slide it along the line to that edge's row
      const int64_t row = ca < 8 ? 0 : bottom;
      a.x += (row - a.y) * (b.x - a.x) / (b.y - a.y);
      a.y = row;
      ca = x_outcode(a);
    }
    if (cb & 12) {
      const int64_t row = cb < 8 ? 0 : bottom;
      b.x += (row - b.y) * (b.x - a.x) / (b.y - a.y);
      b.y = row;
      cb = x_outcode(b);
    }
    if ((ca & cb) == 0 && (ca | cb) != 0) {
      if (ca) {
        const int64_t col = ca == 1 ? 0 : right;
        a.y += (col - a.x) * (b.y - a.y) / (b.x - a.x);
        a.x = col;
        ca = 0;
      }
      if (cb) {
        const int64_t col = cb == 1 ? 0 : right;
        b.y += (col - b.x) * (b.y - a.y) / (b.x - a.x);
        b.x = col;
        cb = 0;
      }
    }
  }
  return (ca | cb) == 0;
}

// The 8-connected line of OpenCV's LineIterator (left to right), ends clipped to the image first.
void line8(const CvImageU8& img, Pt a, Pt b, const uint8_t* color) {
  if (!inside(img, a.x, a.y) || !inside(img, b.x, b.y)) {
    if (!clip_line(img.width, img.height, a, b)) return;
  }
  int64_t dx = b.x - a.x, dy = b.y - a.y;
  if (dx < 0) {  // start from the left end
    dx = -dx;
    dy = -dy;
    a = b;
  }
  const int64_t y_dir = dy < 0 ? -1 : 1;
  if (dy < 0) dy = -dy;
  const bool steep = dy > dx;  // then y advances every pixel and x only sometimes
  const int64_t major = steep ? dy : dx, minor = steep ? dx : dy;
  int64_t err = major - 2 * minor;
  Pt p = a;
  for (int64_t i = 0; i <= major; ++i) {
    put(img, p.x, p.y, color);
    const bool side_step = err < 0;
    err += -2 * minor + (side_step ? 2 * major : 0);
    if (steep) {
      p.y += y_dir;
      if (side_step) p.x += 1;
    } else {
      p.x += 1;
      if (side_step) p.y += y_dir;
    }
  }
}

// OpenCV's fixed-point line (Line2): ends in 16-bit fixed point, clipped to the image scaled to
// that fixed point, one pixel per step along the longer axis, pixels outside the image skipped.
void line_fixed(const CvImageU8& img, Pt a, Pt b, const uint8_t* color) {
  if (!clip_line(int64_t{img.width} * kOne, int64_t{img.height} * kOne, a, b)) return;
  int64_t dx = b.x - a.x, dy = b.y - a.y;
  const int64_t ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
  const bool along_x = ax > ay;
  int64_t x_step, y_step, count;
  if (along_x) {
    if (dx < 0) {
      std::swap(a, b);
      dy = -dy;
    }
    x_step = kOne;
    y_step = dy * kOne / (ax | 1);
    count = floor_shift(b.x - a.x);
  } else {
    if (dy < 0) {
      std::swap(a, b);
      dx = -dx;
    }
    x_step = dx * kOne / (ay | 1);
    y_step = kOne;
    count = floor_shift(b.y - a.y);
  }
  auto put_clipped = [&](int64_t x, int64_t y) {
    if (inside(img, x, y)) put(img, x, y, color);
  };
  put_clipped(floor_shift(b.x + kHalf), floor_shift(b.y + kHalf));
  int64_t x = a.x + kHalf, y = a.y + kHalf;
  if (along_x) {
    x = floor_shift(x);
    for (; count >= 0; --count, ++x, y += y_step) put_clipped(x, floor_shift(y));
  } else {
    y = floor_shift(y);
    for (; count >= 0; --count, x += x_step, ++y) put_clipped(floor_shift(x), y);
  }
}

// OpenCV's FillConvexPoly for LINE_8 with 16 fractional bits: the outline with line_fixed, then the
// rows between a left and a right edge walker that start at the topmost vertex and step through the
// vertices in opposite directions, sharing one budget of `n` edges.
void fill_convex_poly(const CvImageU8& img, const Pt* v, int n, const uint8_t* color) {
  int imin = 0;
  int64_t xmin = v[0].x, xmax = v[0].x, ymin = v[0].y, ymax = v[0].y;
  Pt prev = v[n - 1];
  for (int i = 0; i < n; ++i) {
    if (v[i].y < ymin) {
      ymin = v[i].y;
      imin = i;
    }
    ymax = std::max(ymax, v[i].y);
    xmax = std::max(xmax, v[i].x);
    xmin = std::min(xmin, v[i].x);
    line_fixed(img, prev, v[i], color);
    prev = v[i];
  }
  const int x_lo = static_cast<int>(floor_shift(xmin + kHalf)), x_hi = static_cast<int>(floor_shift(xmax + kHalf));
  const int y_lo = static_cast<int>(floor_shift(ymin + kHalf));
  int y_hi = static_cast<int>(floor_shift(ymax + kHalf));
  if (n < 3 || x_hi < 0 || y_hi < 0 || x_lo >= img.width || y_lo >= img.height) return;
  y_hi = std::min(y_hi, img.height - 1);

  struct Walker {
    int idx, di;
    int64_t x, dx;
    int ye;
  };
  Walker walkers[2] = {{imin, 1, -kOne, 0, y_lo}, {imin, n - 1, -kOne, 0, y_lo}};
  int budget = n;
  int y = y_lo;
  do {
    for (Walker& w : walkers) {
      if (y < w.ye) continue;
      int from = w.idx, to = w.idx + w.di;
      if (to >= n) to -= n;
      for (; budget-- > 0;) {
        const int ty = static_cast<int>(floor_shift(v[to].y + kHalf));
        if (ty > y) {  // the next edge that reaches below this row
          w.ye = ty;
          w.dx = ((v[to].x - v[from].x) * 2 + (ty - y)) / (2 * (ty - y));
          w.x = v[from].x;
          w.idx = to;
          break;
        }
        from = to;
        to += w.di;
        if (to >= n) to -= n;
      }
    }
    if (budget < 0) break;
    if (y >= 0) {
      const bool swapped = walkers[0].x > walkers[1].x;
      const int x1 = static_cast<int>(floor_shift(walkers[swapped ? 1 : 0].x + kHalf));
      const int x2 = static_cast<int>(floor_shift(walkers[swapped ? 0 : 1].x + kHalf));
      if (x2 >= 0 && x1 < img.width) hline(img, y, std::max(x1, 0), std::min(x2, img.width - 1), color);
    }
    walkers[0].x += walkers[0].dx;
    walkers[1].x += walkers[1].dx;
  } while (++y <= y_hi);
}

// OpenCV's filled midpoint circle (Circle with fill): four rows per step, clipped to the image.
void circle_filled(const CvImageU8& img, int64_t cx, int64_t cy, int64_t radius, const uint8_t* color) {
  int64_t err = 0, dx = radius, dy = 0, plus = 1, minus = 2 * radius - 1;
  auto row = [&](int64_t y, int64_t x1, int64_t x2) {
    if (y >= 0 && y < img.height) hline(img, y, x1, x2, color);
  };
  while (dx >= dy) {
    int64_t x11 = cx - dx, x12 = cx + dx, x21 = cx - dy, x22 = cx + dy;
    if (x11 < img.width && x12 >= 0 && cy - dx < img.height && cy + dx >= 0) {
      x11 = std::max<int64_t>(x11, 0);
      x12 = std::min<int64_t>(x12, img.width - 1);
      row(cy - dy, x11, x12);
      row(cy + dy, x11, x12);
      if (x21 < img.width && x22 >= 0) {
        x21 = std::max<int64_t>(x21, 0);
        x22 = std::min<int64_t>(x22, img.width - 1);
        row(cy - dx, x21, x22);
        row(cy + dx, x21, x22);
      }
    }
    ++dy;
    err += plus;
    plus += 2;
    if (err > 0) {
      err -= minus;
      --dx;
      minus -= 2;
    }
  }
}

}  // namespace

void cv_line(CvImageU8 img, int x0, int y0, int x1, int y1, const uint8_t* color, int thickness) {
  if (thickness < 0 || thickness > 32767)
    throw std::invalid_argument("cv_line: thickness must be in [0, 32767], got " + std::to_string(thickness));
  if (thickness <= 1) {
    line8(img, {x0, y0}, {x1, y1}, color);
    return;
  }
  // A thick line: the quadrilateral offset by half the thickness on both sides, in fixed point,
  // then round caps (filled circles) at both ends.
  const Pt a{int64_t{x0} * kOne, int64_t{y0} * kOne}, b{int64_t{x1} * kOne, int64_t{y1} * kOne};
  const double dx = static_cast<double>(a.x - b.x) * (1.0 / static_cast<double>(kOne));
  const double dy = static_cast<double>(b.y - a.y) * (1.0 / static_cast<double>(kOne));
  double r = dx * dx + dy * dy;
  const int64_t half_thickness = int64_t{thickness} << (kShift - 1);
  const int odd = thickness & 1;
  if (std::fabs(r) > DBL_EPSILON) {
    r = (static_cast<double>(half_thickness) + odd * static_cast<double>(kOne) * 0.5) / std::sqrt(r);
    const int64_t ox = cv_round(dy * r), oy = cv_round(dx * r);
    const Pt quad[4] = {{a.x + ox, a.y + oy}, {a.x - ox, a.y - oy}, {b.x - ox, b.y - oy}, {b.x + ox, b.y + oy}};
    fill_convex_poly(img, quad, 4, color);
  }
  const int64_t radius = floor_shift(half_thickness + kHalf);
  for (const Pt& end : {a, b}) circle_filled(img, floor_shift(end.x + kHalf), floor_shift(end.y + kHalf), radius, color);
}

void cv_draw_marker_cross(CvImageU8 img, int x, int y, const uint8_t* color, int marker_size, int thickness) {
  const int half = marker_size / 2;
  cv_line(img, x - half, y, x + half, y, color, thickness);
  cv_line(img, x, y - half, x, y + half, color, thickness);
}

}  // namespace lerobot
