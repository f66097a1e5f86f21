// OpenCV's INTER_LINEAR resize of 8-bit images, after the fixed-point scheme of OpenCV 4.x's resize.cpp:
// per-axis weights in 1/2048 units, a horizontal pass into int rows, and a vertical pass that drops 4
// bits per row, keeps the high 16 bits of each weighted term and rounds away the last 2 bits.
#include "lerobot/envs/cv_resize.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace lerobot {

namespace {

constexpr int kCoefBits = 11;
constexpr int kCoefScale = 1 << kCoefBits;  // 2048

// Round half to even, as the SSE conversion OpenCV's cvRound uses (independent of the FP mode).
int round_half_even(float v) {
  const float f = std::floor(v);
  const float d = v - f;
  int r = static_cast<int>(f);
  if (d > 0.5f || (d == 0.5f && (r & 1))) ++r;
  return r;
}

int round_half_even(double v) {
  const double f = std::floor(v);
  const double d = v - f;
  long long r = static_cast<long long>(f);
  if (d > 0.5 || (d == 0.5 && (r & 1))) ++r;
  return static_cast<int>(std::max<long long>(INT32_MIN, std::min<long long>(INT32_MAX, r)));
}

short weight_to_fixed(float w) {
  const int v = round_half_even(w * static_cast<float>(kCoefScale));
  return static_cast<short>(std::max(-32768, std::min(32767, v)));
}

// The source coordinate of output index `d`: (d + 0.5) * scale - 0.5 in double, narrowed to float.
// The product goes through memory so that no compiler fuses it into an FMA (OpenCV's build does not).
float source_coord(int d, double scale) {
  volatile double prod = (d + 0.5) * scale;
  return static_cast<float>(prod - 0.5);
}

// Exact halving of both sides: OpenCV swaps in its 2x2 box filter.
void halve(const uint8_t* src, int src_w, int cn, uint8_t* dst, int dst_h, int dst_w) {
  const size_t sstep = static_cast<size_t>(src_w) * cn;
  const size_t dstep = static_cast<size_t>(dst_w) * cn;
  for (int y = 0; y < dst_h; ++y) {
    const uint8_t* s0 = src + 2 * y * sstep;
    const uint8_t* s1 = s0 + sstep;
    uint8_t* d = dst + y * dstep;
    for (int x = 0; x < dst_w; ++x) {
      for (int c = 0; c < cn; ++c) {
        const size_t i = static_cast<size_t>(2 * x) * cn + c;
        const int sum = s0[i] + s0[i + cn] + s1[i] + s1[i + cn];
        // 1, 3 and 4 channels take the integer path; other counts go through float and cvRound.
        const int v = (cn == 1 || cn == 3 || cn == 4) ? (sum + 2) >> 2 : round_half_even(sum * 0.25f);
        d[static_cast<size_t>(x) * cn + c] = static_cast<uint8_t>(std::min(255, std::max(0, v)));
      }
    }
  }
}

struct AxisTaps {
  std::vector<int> ofs;   // first source index of each output index (before clamping rows)
  std::vector<short> w0;  // fixed-point weight of that index
  std::vector<short> w1;  // fixed-point weight of the next index
};

// Horizontal taps: indices clamped to the image, weights zeroed at the clamped edges; also the first
// output index (xmax) from which OpenCV copies the clamped pixel instead of interpolating.
AxisTaps horizontal_taps(int src_w, int dst_w, double scale, int& xmax) {
  AxisTaps t;
  t.ofs.resize(dst_w);
  t.w0.resize(dst_w);
  t.w1.resize(dst_w);
  xmax = dst_w;
  for (int dx = 0; dx < dst_w; ++dx) {
    float fx = source_coord(dx, scale);
    int sx = static_cast<int>(std::floor(fx));
    fx -= static_cast<float>(sx);
    if (sx < 0) fx = 0.f, sx = 0;
    if (sx + 1 >= src_w) {
      xmax = std::min(xmax, dx);
      if (sx >= src_w - 1) fx = 0.f, sx = src_w - 1;
    }
    t.ofs[dx] = sx;
    t.w0[dx] = weight_to_fixed(1.f - fx);
    t.w1[dx] = weight_to_fixed(fx);
  }
  return t;
}

// Vertical taps: the unclamped first row and the raw weights (rows are clamped when read).
AxisTaps vertical_taps(int dst_h, double scale) {
  AxisTaps t;
  t.ofs.resize(dst_h);
  t.w0.resize(dst_h);
  t.w1.resize(dst_h);
  for (int dy = 0; dy < dst_h; ++dy) {
    float fy = source_coord(dy, scale);
    const int sy = static_cast<int>(std::floor(fy));
    fy -= static_cast<float>(sy);
    t.ofs[dy] = sy;
    t.w0[dy] = weight_to_fixed(1.f - fy);
    t.w1[dy] = weight_to_fixed(fy);
  }
  return t;
}

// One source row filtered horizontally into `out` (dst_w * cn values): each weighted sum (scaled by
// 2048) already shifted right by the 4 bits the vertical pass drops, so it fits 16 bits. CN > 0 is
// a channel count known at compile time (the inner loop unrolled); 0 takes `cn` at run time.
template <int CN>
void horizontal_pass(const uint8_t* row, int cn_run, const AxisTaps& h, int xmax, int16_t* out) {
  const int cn = CN > 0 ? CN : cn_run;
  const int dst_w = static_cast<int>(h.ofs.size());
  const int* ofs = h.ofs.data();
  const short* w0 = h.w0.data();
  const short* w1 = h.w1.data();
  for (int dx = 0; dx < xmax; ++dx) {
    const uint8_t* p = row + static_cast<size_t>(ofs[dx]) * cn;
    int16_t* o = out + static_cast<size_t>(dx) * cn;
    const int a = w0[dx], b = w1[dx];
    for (int c = 0; c < cn; ++c) o[c] = static_cast<int16_t>((p[c] * a + p[c + cn] * b) >> 4);
  }
  for (int dx = xmax; dx < dst_w; ++dx) {
    const uint8_t* p = row + static_cast<size_t>(ofs[dx]) * cn;
    int16_t* o = out + static_cast<size_t>(dx) * cn;
    for (int c = 0; c < cn; ++c) o[c] = static_cast<int16_t>((p[c] * kCoefScale) >> 4);
  }
}

// The vertical pass over two filtered rows: each value weighted by its row's weight, keeping the
// high 16 bits (a 16-bit multiply-high, which the compiler vectorizes), then rounded by 2 bits.
void vertical_pass(const int16_t* r0, const int16_t* r1, int b0, int b1, uint8_t* d, size_t width) {
  const int16_t w0 = static_cast<int16_t>(b0), w1 = static_cast<int16_t>(b1);
  for (size_t x = 0; x < width; ++x) {
    const int16_t t0 = static_cast<int16_t>((static_cast<int32_t>(w0) * r0[x]) >> 16);
    const int16_t t1 = static_cast<int16_t>((static_cast<int32_t>(w1) * r1[x]) >> 16);
    const int t = ((t0 + t1) + 2) >> 2;
    d[x] = static_cast<uint8_t>(t < 0 ? 0 : (t > 255 ? 255 : t));
  }
}

void bilinear(const uint8_t* src, int src_h, int src_w, int cn, uint8_t* dst, int dst_h, int dst_w,
              double scale_x, double scale_y) {
  int xmax = 0;
  const AxisTaps h = horizontal_taps(src_w, dst_w, scale_x, xmax);
  const AxisTaps v = vertical_taps(dst_h, scale_y);
  const size_t sstep = static_cast<size_t>(src_w) * cn;
  const size_t width = static_cast<size_t>(dst_w) * cn;
  auto filter_row = [&](const uint8_t* row, int16_t* out) {
    switch (cn) {
      case 1: return horizontal_pass<1>(row, cn, h, xmax, out);
      case 3: return horizontal_pass<3>(row, cn, h, xmax, out);
      case 4: return horizontal_pass<4>(row, cn, h, xmax, out);
      default: return horizontal_pass<0>(row, cn, h, xmax, out);
    }
  };
  // Two cached filtered rows, keyed by their (clamped) source row.
  std::vector<int16_t> buf(2 * width);
  int16_t* rows[2] = {buf.data(), buf.data() + width};
  int cached[2] = {-1, -1};
  for (int dy = 0; dy < dst_h; ++dy) {
    const int want[2] = {std::min(std::max(v.ofs[dy], 0), src_h - 1),
                         std::min(std::max(v.ofs[dy] + 1, 0), src_h - 1)};
    if (cached[0] != want[0] && cached[1] == want[0]) {  // moved down one row: reuse it
      std::swap(rows[0], rows[1]);
      std::swap(cached[0], cached[1]);
    }
    for (int k = 0; k < 2; ++k) {
      if (cached[k] == want[k]) continue;
      filter_row(src + want[k] * sstep, rows[k]);
      cached[k] = want[k];
    }
    vertical_pass(rows[0], rows[1], v.w0[dy], v.w1[dy], dst + dy * width, width);
  }
}

}  // namespace

void cv_resize_linear_u8(const uint8_t* src, int src_h, int src_w, int channels, uint8_t* dst, int dst_h,
                         int dst_w) {
  if (src_h <= 0 || src_w <= 0 || dst_h <= 0 || dst_w <= 0 || channels <= 0)
    throw std::invalid_argument("cv_resize_linear_u8: sizes and channels must be positive");
  if (src_h == dst_h && src_w == dst_w) {
    std::memcpy(dst, src, static_cast<size_t>(src_h) * src_w * channels);
    return;
  }
  const double inv_x = static_cast<double>(dst_w) / src_w;
  const double inv_y = static_cast<double>(dst_h) / src_h;
  const double scale_x = 1. / inv_x, scale_y = 1. / inv_y;
  const int iscale_x = round_half_even(scale_x), iscale_y = round_half_even(scale_y);
  const bool integer_scale = std::abs(scale_x - iscale_x) < 2.220446049250313e-16 &&
                             std::abs(scale_y - iscale_y) < 2.220446049250313e-16;
  if (integer_scale && iscale_x == 2 && iscale_y == 2) {
    halve(src, src_w, channels, dst, dst_h, dst_w);
    return;
  }
  bilinear(src, src_h, src_w, channels, dst, dst_h, dst_w, scale_x, scale_y);
}

}  // namespace lerobot
