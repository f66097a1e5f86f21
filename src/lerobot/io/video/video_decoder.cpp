// VideoDecoder: demux + decode with libavformat/libavcodec, RGB conversion with libswscale.
#include "lerobot/io/video/video_decoder.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/io/video/ffmpeg_util.h"
#include "lerobot/io/video/rgb_convert.h"

namespace lerobot {

using namespace video_detail;

struct VideoDecoder::Impl {
  std::string path;
  DecoderOptions options;
  FormatInputPtr fmt;
  CodecContextPtr ctx;
  AVStream* stream = nullptr;
  int stream_index = -1;
  AVRational time_base{1, 1};
  std::string decoder_name;
  double fps = 0.0;
  int width = 0, height = 0;

  PacketPtr packet{av_packet_alloc()};
  FramePtr current{av_frame_alloc()}, previous{av_frame_alloc()}, incoming{av_frame_alloc()};
  bool has_current = false, has_previous = false;
  double current_pts = 0.0, previous_pts = 0.0;
  bool demux_eof = false, decode_eof = false;
  int64_t seeks = 0;
  RgbConverter converter;

  double frame_seconds(const AVFrame* f, double fallback) const {
    int64_t ts = f->best_effort_timestamp;
    if (ts == AV_NOPTS_VALUE) ts = f->pts;
    if (ts == AV_NOPTS_VALUE) return fallback;
    return double(ts) * time_base.num / time_base.den;
  }

  void convert(const AVFrame* f, uint8_t* dst, PixelLayout layout) {
    if (f->width != width || f->height != height) {
      throw_data("frame size changed mid-stream to " + std::to_string(f->width) + "x" +
                     std::to_string(f->height) + " (stream is " + std::to_string(width) + "x" +
                     std::to_string(height) + ")",
                 path, "re-encode the video with a constant resolution");
    }
    converter.convert(f, dst, layout, path);
  }

  [[noreturn]] void fail(const std::string& what, int err) const {
    throw_data(what + ": " + av_error_text(err), path,
               "the video may be corrupt or truncated; re-encode or re-download it");
  }
};

VideoDecoder::VideoDecoder(std::string path, DecoderOptions options) : impl_(new Impl) {
  Impl& m = *impl_;
  m.path = std::move(path);
  m.options = options;
  m.fmt = open_input(m.path);
  m.stream_index = find_video_stream(m.fmt.get(), m.path);
  m.stream = m.fmt->streams[m.stream_index];
  for (unsigned i = 0; i < m.fmt->nb_streams; ++i) {
    if (int(i) != m.stream_index) m.fmt->streams[i]->discard = AVDISCARD_ALL;
  }
  m.time_base = m.stream->time_base;
  const AVCodecParameters* par = m.stream->codecpar;
  const AVCodec* codec = nullptr;
  if (par->codec_id == AV_CODEC_ID_AV1 && options.prefer_dav1d) {
    codec = avcodec_find_decoder_by_name("libdav1d");
  }
  if (!codec) codec = avcodec_find_decoder(par->codec_id);
  if (!codec) {
    throw_data(std::string("no FFmpeg decoder for codec ") + avcodec_get_name(par->codec_id),
               m.path, "install an FFmpeg build with this decoder or re-encode the video to AV1");
  }
  m.decoder_name = codec->name;
  m.ctx.reset(avcodec_alloc_context3(codec));
  int err = avcodec_parameters_to_context(m.ctx.get(), par);
  if (err < 0) m.fail("cannot configure decoder", err);
  m.ctx->pkt_timebase = m.time_base;
  m.ctx->thread_count = std::max(0, options.threads);
  err = avcodec_open2(m.ctx.get(), codec, nullptr);
  if (err < 0) m.fail("cannot open decoder " + m.decoder_name, err);
  m.width = par->width;
  m.height = par->height;
  AVRational rate = m.stream->avg_frame_rate.num ? m.stream->avg_frame_rate : m.stream->r_frame_rate;
  m.fps = rate.den ? av_q2d(rate) : 0.0;
}

VideoDecoder::~VideoDecoder() = default;

const std::string& VideoDecoder::path() const { return impl_->path; }
int VideoDecoder::width() const { return impl_->width; }
int VideoDecoder::height() const { return impl_->height; }
double VideoDecoder::fps() const { return impl_->fps; }
const std::string& VideoDecoder::decoder_name() const { return impl_->decoder_name; }

int VideoDecoder::threads() const {
  int t = impl_->ctx->thread_count;
  if (t <= 0) t = int(std::max(1u, std::thread::hardware_concurrency()));
  return t;
}

size_t VideoDecoder::memory_estimate() const {
  size_t yuv = size_t(impl_->width) * impl_->height * 3 / 2;
  // Reference frames (AV1 keeps 8, H.264 up to 16), frames in flight per thread, our 3 slots.
  return yuv * (12 + 2 * size_t(threads())) + frame_bytes() + (size_t(1) << 20);
}

bool VideoDecoder::next(RgbFrame& out, PixelLayout layout) {
  if (!advance()) return false;
  out.width = width();
  out.height = height();
  out.layout = layout;
  out.pts_s = impl_->current_pts;
  out.data.resize(frame_bytes());
  convert_current(out.data.data(), layout);
  return true;
}

bool VideoDecoder::next_into(uint8_t* dst, PixelLayout layout, double* pts_s) {
  if (!advance()) return false;
  convert_current(dst, layout);
  if (pts_s) *pts_s = impl_->current_pts;
  return true;
}

void VideoDecoder::seek(double ts_s) {
  Impl& m = *impl_;
  double ticks = ts_s * m.time_base.den / m.time_base.num;
  int64_t target = int64_t(std::floor(ticks + 0.5));
  int err = av_seek_frame(m.fmt.get(), m.stream_index, target, AVSEEK_FLAG_BACKWARD);
  if (err < 0) {
    // Before the first keyframe: go to the start of the stream.
    err = avformat_seek_file(m.fmt.get(), m.stream_index, INT64_MIN, target, INT64_MAX, 0);
  }
  if (err < 0) m.fail("cannot seek to " + std::to_string(ts_s) + " s", err);
  ++m.seeks;
  avcodec_flush_buffers(m.ctx.get());
  av_frame_unref(m.current.get());
  av_frame_unref(m.previous.get());
  m.has_current = m.has_previous = false;
  m.demux_eof = m.decode_eof = false;
}

bool VideoDecoder::advance() {
  Impl& m = *impl_;
  if (m.decode_eof) return false;
  while (true) {
    int err = avcodec_receive_frame(m.ctx.get(), m.incoming.get());
    if (err == 0) {
      double fallback = m.has_current ? m.current_pts + (m.fps > 0 ? 1.0 / m.fps : 0.0) : 0.0;
      av_frame_unref(m.previous.get());
      av_frame_move_ref(m.previous.get(), m.current.get());
      av_frame_move_ref(m.current.get(), m.incoming.get());
      m.previous_pts = m.current_pts;
      m.has_previous = m.has_current;
      m.current_pts = m.frame_seconds(m.current.get(), fallback);
      m.has_current = true;
      return true;
    }
    if (err == AVERROR_EOF) {
      m.decode_eof = true;
      return false;
    }
    if (err != AVERROR(EAGAIN)) m.fail("decoding failed", err);
    if (m.demux_eof) {
      m.decode_eof = true;  // drained without an explicit EOF
      return false;
    }
    err = av_read_frame(m.fmt.get(), m.packet.get());
    if (err == AVERROR_EOF) {
      m.demux_eof = true;
      err = avcodec_send_packet(m.ctx.get(), nullptr);
      if (err < 0 && err != AVERROR_EOF) m.fail("flushing the decoder failed", err);
      continue;
    }
    if (err < 0) m.fail("reading a packet failed", err);
    if (m.packet->stream_index == m.stream_index) {
      err = avcodec_send_packet(m.ctx.get(), m.packet.get());
      av_packet_unref(m.packet.get());
      if (err < 0 && err != AVERROR(EAGAIN)) m.fail("decoding a packet failed", err);
    } else {
      av_packet_unref(m.packet.get());
    }
  }
}

bool VideoDecoder::has_current() const { return impl_->has_current; }
bool VideoDecoder::has_previous() const { return impl_->has_previous; }
double VideoDecoder::current_pts() const { return impl_->current_pts; }
double VideoDecoder::previous_pts() const { return impl_->previous_pts; }
bool VideoDecoder::at_end() const { return impl_->decode_eof; }
int64_t VideoDecoder::seek_count() const { return impl_->seeks; }

double VideoDecoder::start_time() const {
  const AVStream* st = impl_->stream;
  if (st->start_time == AV_NOPTS_VALUE) return 0.0;
  return double(st->start_time) * impl_->time_base.num / impl_->time_base.den;
}

double VideoDecoder::keyframe_at_or_before(double ts_s) const {
  Impl& m = *impl_;
  int64_t target = int64_t(std::floor(ts_s * m.time_base.den / m.time_base.num + 0.5));
  int i = av_index_search_timestamp(m.stream, target, AVSEEK_FLAG_BACKWARD);
  if (i < 0) return -1.0;
  const AVIndexEntry* e = avformat_index_get_entry(m.stream, i);
  if (!e) return -1.0;
  return double(e->timestamp) * m.time_base.num / m.time_base.den;
}

void VideoDecoder::convert_current(uint8_t* dst, PixelLayout layout) {
  LEROBOT_CHECK(impl_->has_current, "convert_current without a decoded frame");
  impl_->convert(impl_->current.get(), dst, layout);
}

void VideoDecoder::convert_previous(uint8_t* dst, PixelLayout layout) {
  LEROBOT_CHECK(impl_->has_previous, "convert_previous without a previous frame");
  impl_->convert(impl_->previous.get(), dst, layout);
}

}  // namespace lerobot
