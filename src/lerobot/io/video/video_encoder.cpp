// VideoEncoder: swscale RGB -> YUV, libavcodec encode, libavformat mp4 mux (pts = frame counter).
#include "lerobot/io/video/video_encoder.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/thread_scheduling.h"
#include "lerobot/io/video/ffmpeg_util.h"

extern "C" {
#include <libavutil/dict.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

namespace lerobot {

using namespace video_detail;

struct VideoEncoder::Impl {
  std::string path;
  int width = 0, height = 0, fps = 0;
  EncoderOptions options;
  AVFormatContext* out = nullptr;  // owned; freed in close()
  CodecContextPtr ctx;
  AVStream* stream = nullptr;
  FramePtr frame{av_frame_alloc()};
  PacketPtr packet{av_packet_alloc()};
  SwsPtr sws_hwc, sws_chw;
  std::vector<uint8_t> padded;  // input copy with padded rows when width % 32 != 0
  int64_t next_pts = 0;
  bool header_written = false, finished = false;

  [[noreturn]] void fail(const std::string& what, int err) const {
    throw_runtime(what + ": " + av_error_text(err), path,
                  "check that FFmpeg has the encoder and the output folder is writable");
  }

  void close() {
    if (out) {
      if (out->pb && !(out->oformat->flags & AVFMT_NOFILE)) avio_closep(&out->pb);
      avformat_free_context(out);
      out = nullptr;
    }
  }

  void drain(bool flush) {
    int err = avcodec_send_frame(ctx.get(), flush ? nullptr : frame.get());
    if (err < 0 && !(flush && err == AVERROR_EOF)) fail("encoding a frame failed", err);
    while (true) {
      err = avcodec_receive_packet(ctx.get(), packet.get());
      if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return;
      if (err < 0) fail("encoding failed", err);
      if (packet->duration <= 0) packet->duration = 1;  // one frame in the 1/fps codec time base
      av_packet_rescale_ts(packet.get(), ctx->time_base, stream->time_base);
      packet->stream_index = stream->index;
      err = av_interleaved_write_frame(out, packet.get());
      if (err < 0) fail("writing a packet failed", err);
    }
  }

  SwsContext* converter(PixelLayout layout) {
    SwsPtr& s = layout == PixelLayout::kHWC ? sws_hwc : sws_chw;
    if (!s) {
      AVPixelFormat src = layout == PixelLayout::kHWC ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_GBRP;
      s.reset(sws_getContext(width, height, src, width, height, ctx->pix_fmt, SWS_BILINEAR,
                             nullptr, nullptr, nullptr));
      if (!s) throw_runtime("cannot create RGB -> " + options.pix_fmt + " converter", path);
      // RGB (full range) to limited-range BT.601 YCbCr, as PyAV's default reformat does.
      const int* coefs = sws_getCoefficients(SWS_CS_DEFAULT);
      sws_setColorspaceDetails(s.get(), coefs, 1, coefs, 0, 0, 1 << 16, 1 << 16);
    }
    return s.get();
  }
};

VideoEncoder::VideoEncoder(std::string path, int width, int height, int fps,
                           EncoderOptions options)
    : impl_(new Impl) {
  init_ffmpeg_logging();
  static const bool quiet_svt = [] { return ::setenv("SVT_LOG", "1", 0) == 0; }();  // errors only
  (void)quiet_svt;
  Impl& m = *impl_;
  m.path = std::move(path);
  m.width = width;
  m.height = height;
  m.fps = fps;
  m.options = options;
  if (width <= 0 || height <= 0 || fps <= 0) {
    throw_usage("video size and fps must be positive (got " + std::to_string(width) + "x" +
                    std::to_string(height) + " at " + std::to_string(fps) + " fps)",
                m.path);
  }
  if (options.codec == "libsvtav1" && (width < 64 || height < 64)) {
    throw_usage("libsvtav1 cannot encode frames smaller than 64x64 (got " + std::to_string(width) +
                    "x" + std::to_string(height) + ")",
                m.path, "use a larger image size or another codec (libx264)");
  }
  const AVCodec* codec = avcodec_find_encoder_by_name(options.codec.c_str());
  if (!codec) {
    throw_usage("FFmpeg has no encoder named " + options.codec, m.path,
                "use libsvtav1 (LeRobot's default), libx264 or libx265");
  }
  AVPixelFormat pix = av_get_pix_fmt(options.pix_fmt.c_str());
  if (pix == AV_PIX_FMT_NONE) throw_usage("unknown pix_fmt " + options.pix_fmt, m.path);

  int err = avformat_alloc_output_context2(&m.out, nullptr, "mp4", m.path.c_str());
  if (err < 0 || !m.out) m.fail("cannot create the mp4 muxer", err);
  m.stream = avformat_new_stream(m.out, nullptr);
  m.ctx.reset(avcodec_alloc_context3(codec));
  AVCodecContext* c = m.ctx.get();
  c->width = width;
  c->height = height;
  c->pix_fmt = pix;
  c->time_base = AVRational{1, fps};
  c->framerate = AVRational{fps, 1};
  c->gop_size = options.g;
  c->color_range = AVCOL_RANGE_MPEG;
  if (m.out->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;

  AVDictionary* opts = nullptr;
  av_dict_set_int(&opts, "crf", options.crf, 0);
  if (options.codec == "libsvtav1") {
    av_dict_set_int(&opts, "preset", options.preset, 0);
    std::string params = "fast-decode=" + std::to_string(options.fast_decode);
    if (options.threads > 0) params += ":lp=" + std::to_string(options.threads);
    av_dict_set(&opts, "svtav1-params", params.c_str(), 0);
  } else if (options.threads > 0) {
    c->thread_count = options.threads;
  }
  for (const auto& [k, v] : options.extra_options) av_dict_set(&opts, k.c_str(), v.c_str(), 0);
  {
    // SVT-AV1's init makes the calling thread (and the workers it starts) SCHED_FIFO 99 when it
    // may: as root, the recorder and every training rank it launches would run at real-time
    // priority. The guard puts every such thread back.
    KeepThreadScheduling keep_scheduling;
    err = avcodec_open2(c, codec, &opts);
  }
  for (const AVDictionaryEntry* e = nullptr; (e = av_dict_get(opts, "", e, AV_DICT_IGNORE_SUFFIX));) {
    LOG_WARNING << "video encoder " << options.codec << " ignored option " << e->key << "="
                << e->value;
  }
  av_dict_free(&opts);
  if (err < 0) m.fail("cannot open encoder " + options.codec, err);

  err = avcodec_parameters_from_context(m.stream->codecpar, c);
  if (err < 0) m.fail("cannot set stream parameters", err);
  m.stream->time_base = c->time_base;  // the mp4 muxer scales it up to >= 10000 ticks/s exactly
  m.stream->avg_frame_rate = c->framerate;

  err = avio_open(&m.out->pb, m.path.c_str(), AVIO_FLAG_WRITE);
  if (err < 0) m.fail("cannot create the output file", err);
  AVDictionary* mux = nullptr;
  if (options.faststart) av_dict_set(&mux, "movflags", "faststart", 0);
  err = avformat_write_header(m.out, &mux);
  av_dict_free(&mux);
  if (err < 0) m.fail("cannot write the mp4 header", err);
  m.header_written = true;

  m.frame->format = pix;
  m.frame->width = width;
  m.frame->height = height;
  err = av_frame_get_buffer(m.frame.get(), 0);
  if (err < 0) m.fail("cannot allocate a frame", err);
}

VideoEncoder::~VideoEncoder() {
  if (!impl_->finished) {
    impl_->close();
    std::error_code ec;
    std::filesystem::remove(impl_->path, ec);
  }
}

void VideoEncoder::add_frame(const uint8_t* rgb, PixelLayout layout) {
  Impl& m = *impl_;
  if (m.finished) throw_usage("add_frame after finish()", m.path);
  int err = av_frame_make_writable(m.frame.get());
  if (err < 0) m.fail("cannot make the frame writable", err);
  const size_t plane = size_t(m.width) * m.height;
  const uint8_t* src[4] = {nullptr, nullptr, nullptr, nullptr};
  int lines[4] = {0, 0, 0, 0};
  if (layout == PixelLayout::kHWC) {
    src[0] = rgb;
    lines[0] = 3 * m.width;
  } else {  // GBRP planes: G, B, R
    src[0] = rgb + plane;
    src[1] = rgb + 2 * plane;
    src[2] = rgb;
    lines[0] = lines[1] = lines[2] = m.width;
  }
  if (m.width % 32 != 0) {
    // swscale's SIMD reads whole blocks past a row's end: give it padded copies of the rows.
    const int planes = layout == PixelLayout::kHWC ? 1 : 3;
    const size_t stride = (size_t(lines[0]) + 127) & ~size_t(63);
    m.padded.resize(stride * (size_t(m.height) * planes + 1));
    for (int p = 0; p < planes; ++p) {
      uint8_t* base = m.padded.data() + stride * size_t(m.height) * p;
      for (int y = 0; y < m.height; ++y) {
        std::memcpy(base + stride * y, src[p] + size_t(lines[p]) * y, size_t(lines[p]));
      }
      src[p] = base;
      lines[p] = int(stride);
    }
  }
  sws_scale(m.converter(layout), src, lines, 0, m.height, m.frame->data, m.frame->linesize);
  m.frame->pts = m.next_pts++;
  m.drain(false);
}

void VideoEncoder::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  m.drain(true);
  int err = av_write_trailer(m.out);
  if (err < 0) m.fail("cannot finish the mp4", err);
  m.close();
  m.finished = true;
}

int64_t VideoEncoder::frames_written() const { return impl_->next_pts; }
const std::string& VideoEncoder::path() const { return impl_->path; }

}  // namespace lerobot
