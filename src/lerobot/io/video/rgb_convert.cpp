// Internal: YUV -> RGB conversion (swscale) and the HWC -> CHW split used by VideoDecoder.
#include "lerobot/io/video/rgb_convert.h"

#include <cstring>

#include "lerobot/common/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace lerobot::video_detail {
namespace {

// Maps the deprecated full-range yuvj* formats to their yuv* twins; sets *full when it did.
AVPixelFormat unjpeg(AVPixelFormat f, bool* full) {
  switch (f) {
    case AV_PIX_FMT_YUVJ420P: *full = true; return AV_PIX_FMT_YUV420P;
    case AV_PIX_FMT_YUVJ422P: *full = true; return AV_PIX_FMT_YUV422P;
    case AV_PIX_FMT_YUVJ444P: *full = true; return AV_PIX_FMT_YUV444P;
    case AV_PIX_FMT_YUVJ440P: *full = true; return AV_PIX_FMT_YUV440P;
    case AV_PIX_FMT_YUVJ411P: *full = true; return AV_PIX_FMT_YUV411P;
    default: return f;
  }
}

}  // namespace

namespace {

void deinterleave_rows_scalar(const uint8_t* s, int n, uint8_t* __restrict r, uint8_t* __restrict g,
                              uint8_t* __restrict b) {
  for (int x = 0; x < n; ++x) {
    r[x] = s[3 * x];
    g[x] = s[3 * x + 1];
    b[x] = s[3 * x + 2];
  }
}

#if defined(__x86_64__) || defined(__i386__)
// 16 pixels per step: three pshufb per channel gather R, G, B from 48 interleaved bytes.
__attribute__((target("ssse3"))) void deinterleave_ssse3(const uint8_t* src, int src_linesize,
                                                         int width, int height, uint8_t* dst) {
  const size_t plane = size_t(width) * height;
  const __m128i ra = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i rb = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
  const __m128i rc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
  const __m128i ga = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i gb = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1);
  const __m128i gc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14);
  const __m128i ba = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i bb = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1);
  const __m128i bc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
  for (int y = 0; y < height; ++y) {
    const uint8_t* s = src + size_t(y) * src_linesize;
    uint8_t* r = dst + size_t(y) * width;
    uint8_t* g = r + plane;
    uint8_t* b = r + 2 * plane;
    int x = 0;
    for (; x + 16 <= width; x += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * x));
      const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * x + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * x + 32));
      __m128i vr = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ra), _mm_shuffle_epi8(m, rb)),
                                _mm_shuffle_epi8(c, rc));
      __m128i vg = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ga), _mm_shuffle_epi8(m, gb)),
                                _mm_shuffle_epi8(c, gc));
      __m128i vb = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ba), _mm_shuffle_epi8(m, bb)),
                                _mm_shuffle_epi8(c, bc));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(r + x), vr);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(g + x), vg);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(b + x), vb);
    }
    deinterleave_rows_scalar(s + 3 * x, width - x, r + x, g + x, b + x);
  }
}
#endif

}  // namespace

void deinterleave_rgb(const uint8_t* src, int src_linesize, int width, int height, uint8_t* dst) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has_ssse3 = __builtin_cpu_supports("ssse3");
  if (has_ssse3) {
    deinterleave_ssse3(src, src_linesize, width, height, dst);
    return;
  }
#endif
  const size_t plane = size_t(width) * height;
  for (int y = 0; y < height; ++y) {
    uint8_t* r = dst + size_t(y) * width;
    deinterleave_rows_scalar(src + size_t(y) * src_linesize, width, r, r + plane, r + 2 * plane);
  }
}

void RgbConverter::configure(const AVFrame* frame, const std::string& path) {
  bool full = frame->color_range == AVCOL_RANGE_JPEG;
  AVPixelFormat src = unjpeg(AVPixelFormat(frame->format), &full);
  int cs = frame->colorspace;
  if (sws_ && src_format_ == frame->format && width_ == frame->width && height_ == frame->height &&
      full_range_ == int(full) && colorspace_ == cs) {
    return;
  }
  sws_.reset(sws_getContext(frame->width, frame->height, src, frame->width, frame->height,
                            AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr));
  if (!sws_) {
    const char* name = av_get_pix_fmt_name(AVPixelFormat(frame->format));
    throw_data(std::string("cannot convert pixel format ") + (name ? name : "?") + " to RGB", path,
               "re-encode the video as yuv420p");
  }
  // The YCbCr matrix: the frame's tag when it names one swscale knows, else BT.601.
  int sws_cs = SWS_CS_DEFAULT;
  if (cs == AVCOL_SPC_BT709) sws_cs = SWS_CS_ITU709;
  else if (cs == AVCOL_SPC_FCC) sws_cs = SWS_CS_FCC;
  else if (cs == AVCOL_SPC_SMPTE240M) sws_cs = SWS_CS_SMPTE240M;
  else if (cs == AVCOL_SPC_BT2020_NCL || cs == AVCOL_SPC_BT2020_CL) sws_cs = SWS_CS_BT2020;
  const int* coefs = sws_getCoefficients(sws_cs);
  const int* rgb_coefs = sws_getCoefficients(SWS_CS_DEFAULT);
  sws_setColorspaceDetails(sws_.get(), coefs, full ? 1 : 0, rgb_coefs, 1, 0, 1 << 16, 1 << 16);
  src_format_ = frame->format;
  width_ = frame->width;
  height_ = frame->height;
  full_range_ = int(full);
  colorspace_ = cs;
  // swscale's SIMD yuv2rgb writes whole blocks of 8 pixels and leaves a row's tail unwritten
  // when the stride has no room for the rounded-up width: give the scratch rows that room.
  scratch_linesize_ = (3 * ((width_ + 31) & ~31) + 63) & ~63;
  scratch_.assign(size_t(scratch_linesize_) * height_ + 64, 0);
}

void RgbConverter::convert(const AVFrame* frame, uint8_t* dst, PixelLayout layout,
                           const std::string& path) {
  configure(frame, path);
  uint8_t* planes[4] = {nullptr, nullptr, nullptr, nullptr};
  int lines[4] = {0, 0, 0, 0};
  // Direct output only when rows are whole SIMD blocks (see configure()); else via scratch.
  const bool direct = layout == PixelLayout::kHWC && width_ % 32 == 0;
  if (direct) {
    planes[0] = dst;
    lines[0] = 3 * width_;
  } else {
    planes[0] = scratch_.data();
    lines[0] = scratch_linesize_;
  }
  int rows = sws_scale(sws_.get(), frame->data, frame->linesize, 0, height_, planes, lines);
  if (rows != height_) {
    throw_data("RGB conversion produced " + std::to_string(rows) + " of " +
                   std::to_string(height_) + " rows", path, "re-encode the video as yuv420p");
  }
  if (layout == PixelLayout::kCHW) {
    deinterleave_rgb(scratch_.data(), scratch_linesize_, width_, height_, dst);
  } else if (!direct) {
    for (int y = 0; y < height_; ++y) {
      std::memcpy(dst + size_t(y) * 3 * width_, scratch_.data() + size_t(y) * scratch_linesize_,
                  size_t(3) * width_);
    }
  }
}

}  // namespace lerobot::video_detail
