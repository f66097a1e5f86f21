// PNG through libavcodec: chunk-structure check, decode with CRC checks, conversion of every PNG
// colour type to RGB24, and encode.
#include "lerobot/io/video/png_codec.h"

#include <cstring>

#include "lerobot/common/error.h"
#include "lerobot/io/video/ffmpeg_util.h"

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

namespace lerobot {

using video_detail::av_error_text;

namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

uint32_t be32(const uint8_t* p) { return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3]; }

// Walks the chunk list up to IEND: FFmpeg accepts some truncated files (it returns the rows it
// got), so a cut-off PNG is caught here, before decoding.
void check_structure(const uint8_t* data, size_t size) {
  if (size < 8 || std::memcmp(data, kSignature, 8) != 0)
    throw_data("not a PNG image (" + std::to_string(size) + " bytes without the PNG signature)");
  size_t pos = 8;
  bool first = true;
  while (true) {
    if (size - pos < 12) throw_data("truncated PNG (" + std::to_string(size) + " bytes, no IEND chunk)");
    const uint32_t len = be32(data + pos);
    const std::string type(reinterpret_cast<const char*>(data + pos + 4), 4);
    if (first && type != "IHDR") throw_data("corrupt PNG: the first chunk is '" + type + "', not IHDR");
    first = false;
    if (len > size - pos - 12) throw_data("truncated PNG: chunk '" + type + "' runs past the end of its " + std::to_string(size) + " bytes");
    pos += 12 + len;
    if (type == "IEND") return;
  }
}

struct DecodeContext {
  video_detail::CodecContextPtr ctx;
  video_detail::PacketPtr pkt{av_packet_alloc()};
  video_detail::FramePtr frame{av_frame_alloc()};
};

video_detail::CodecContextPtr open_codec(bool encoder, int width = 0, int height = 0, int level = 6) {
  video_detail::init_ffmpeg_logging();
  const AVCodec* codec = encoder ? avcodec_find_encoder(AV_CODEC_ID_PNG) : avcodec_find_decoder(AV_CODEC_ID_PNG);
  if (!codec) throw_runtime(std::string("this FFmpeg build has no PNG ") + (encoder ? "encoder" : "decoder"), "libavcodec",
                            "install an FFmpeg with the png codec (Debian's libavcodec has it)");
  video_detail::CodecContextPtr ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw_runtime("out of memory allocating the PNG codec");
  ctx->thread_count = 1;
  if (encoder) {
    ctx->width = width;
    ctx->height = height;
    ctx->pix_fmt = AV_PIX_FMT_RGB24;
    ctx->time_base = AVRational{1, 1};
    ctx->compression_level = level;
    av_opt_set(ctx->priv_data, "pred", "mixed", 0);  // per-row filter choice, as libpng's default
  } else {
    ctx->err_recognition = AV_EF_CRCCHECK | AV_EF_EXPLODE;  // a flipped byte fails its chunk CRC
  }
  const int err = avcodec_open2(ctx.get(), codec, nullptr);
  if (err < 0) throw_runtime("cannot open the PNG codec: " + av_error_text(err), "libavcodec");
  return ctx;
}

// A fresh codec context per image: FFmpeg 5's PNG decoder carries state from one image into the
// next of the same size (the second decodes wrong), and opening one costs microseconds.
DecodeContext& thread_decoder() {
  thread_local DecodeContext d;
  d.ctx = open_codec(false);
  return d;
}

// Any decoded PNG frame -> RGB24 rows.
void to_rgb(const AVFrame* f, uint8_t* out) {
  const int w = f->width, h = f->height;
  const auto fmt = static_cast<AVPixelFormat>(f->format);
  for (int y = 0; y < h; ++y) {
    const uint8_t* s = f->data[0] + static_cast<ptrdiff_t>(y) * f->linesize[0];
    uint8_t* d = out + static_cast<size_t>(y) * w * 3;
    switch (fmt) {
      case AV_PIX_FMT_RGB24: std::memcpy(d, s, static_cast<size_t>(w) * 3); break;
      case AV_PIX_FMT_RGBA:
        for (int x = 0; x < w; ++x) std::memcpy(d + 3 * x, s + 4 * x, 3);
        break;
      case AV_PIX_FMT_RGB48BE:  // 16-bit samples, big-endian: keep the high byte
        for (int x = 0; x < 3 * w; ++x) d[x] = s[2 * x];
        break;
      case AV_PIX_FMT_RGBA64BE:
        for (int x = 0; x < w; ++x)
          for (int c = 0; c < 3; ++c) d[3 * x + c] = s[8 * x + 2 * c];
        break;
      case AV_PIX_FMT_GRAY8:
      case AV_PIX_FMT_YA8:
      case AV_PIX_FMT_GRAY16BE:
      case AV_PIX_FMT_YA16BE: {
        const int step = fmt == AV_PIX_FMT_GRAY8 ? 1 : fmt == AV_PIX_FMT_YA16BE ? 4 : 2;
        for (int x = 0; x < w; ++x) d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = s[step * x];
        break;
      }
      case AV_PIX_FMT_PAL8: {
        const uint8_t* pal = f->data[1];  // 256 native-endian 0xAARRGGBB entries
        for (int x = 0; x < w; ++x) {
          uint32_t c;
          std::memcpy(&c, pal + 4 * s[x], 4);
          d[3 * x] = uint8_t(c >> 16);
          d[3 * x + 1] = uint8_t(c >> 8);
          d[3 * x + 2] = uint8_t(c);
        }
        break;
      }
      case AV_PIX_FMT_MONOBLACK:
        for (int x = 0; x < w; ++x) d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = ((s[x >> 3] >> (7 - (x & 7))) & 1) ? 255 : 0;
        break;
      default:
        throw_data(std::string("PNG decodes to pixel format ") + (av_get_pix_fmt_name(fmt) ? av_get_pix_fmt_name(fmt) : "?") +
                   ", which has no RGB conversion here");
    }
  }
}

}  // namespace

RgbImage decode_png(const uint8_t* data, size_t size) {
  check_structure(data, size);
  DecodeContext& d = thread_decoder();
  av_packet_unref(d.pkt.get());
  int err = av_new_packet(d.pkt.get(), static_cast<int>(size));
  if (err < 0) throw_runtime("out of memory for a " + std::to_string(size) + "-byte PNG");
  std::memcpy(d.pkt->data, data, size);
  err = avcodec_send_packet(d.ctx.get(), d.pkt.get());
  if (err >= 0) {
    err = avcodec_receive_frame(d.ctx.get(), d.frame.get());
    if (err == AVERROR(EAGAIN)) {  // not expected with one thread; drain to be sure
      avcodec_send_packet(d.ctx.get(), nullptr);
      err = avcodec_receive_frame(d.ctx.get(), d.frame.get());
    }
  }
  if (err < 0) {
    throw_data("corrupt PNG: " + av_error_text(err));
  }
  RgbImage img;
  img.width = d.frame->width;
  img.height = d.frame->height;
  img.pixels.resize(static_cast<size_t>(img.width) * img.height * 3);
  try {
    to_rgb(d.frame.get(), img.pixels.data());
  } catch (...) {
    av_frame_unref(d.frame.get());
    throw;
  }
  av_frame_unref(d.frame.get());
  return img;
}

std::string encode_png(const uint8_t* rgb, int width, int height, int compression_level) {
  if (width <= 0 || height <= 0) throw_usage("PNG size " + std::to_string(width) + "x" + std::to_string(height) + " is empty");
  if (compression_level < 0 || compression_level > 9)
    throw_usage("PNG compression level " + std::to_string(compression_level) + " is outside 0-9");
  video_detail::CodecContextPtr ctx = open_codec(true, width, height, compression_level);
  video_detail::FramePtr frame(av_frame_alloc());
  frame->format = AV_PIX_FMT_RGB24;
  frame->width = width;
  frame->height = height;
  int err = av_frame_get_buffer(frame.get(), 0);
  if (err < 0) throw_runtime("out of memory for a " + std::to_string(width) + "x" + std::to_string(height) + " frame");
  for (int y = 0; y < height; ++y)
    std::memcpy(frame->data[0] + static_cast<ptrdiff_t>(y) * frame->linesize[0], rgb + static_cast<size_t>(y) * width * 3,
                static_cast<size_t>(width) * 3);
  video_detail::PacketPtr pkt(av_packet_alloc());
  err = avcodec_send_frame(ctx.get(), frame.get());
  if (err >= 0) err = avcodec_receive_packet(ctx.get(), pkt.get());
  if (err == AVERROR(EAGAIN)) {
    avcodec_send_frame(ctx.get(), nullptr);
    err = avcodec_receive_packet(ctx.get(), pkt.get());
  }
  if (err < 0) throw_runtime("PNG encoding failed: " + av_error_text(err), "libavcodec");
  return std::string(reinterpret_cast<const char*>(pkt->data), pkt->size);
}

}  // namespace lerobot
