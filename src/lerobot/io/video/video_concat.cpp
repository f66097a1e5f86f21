// append_video: libavformat remux (stream copy) of dest + episode into one mp4 with shifted pts.
#include "lerobot/io/video/video_concat.h"

#include <algorithm>
#include <filesystem>

#include "lerobot/common/error.h"
#include "lerobot/io/video/ffmpeg_util.h"

extern "C" {
#include <libavutil/dict.h>
}

namespace lerobot {

using namespace video_detail;

namespace {

struct TempFileGuard {
  std::string path;
  bool keep = false;
  ~TempFileGuard() {
    std::error_code ec;
    if (!keep) std::filesystem::remove(path, ec);
  }
};

struct OutputCloser {
  AVFormatContext* out = nullptr;
  ~OutputCloser() {
    if (!out) return;
    if (out->pb) avio_closep(&out->pb);
    avformat_free_context(out);
  }
};

// End of the stream (max pts + duration) in ticks of its time base, by reading every packet.
int64_t stream_end_ticks(AVFormatContext* fmt, int index) {
  PacketPtr pkt(av_packet_alloc());
  int64_t end = 0;
  while (av_read_frame(fmt, pkt.get()) >= 0) {
    if (pkt->stream_index == index && pkt->pts != AV_NOPTS_VALUE) {
      end = std::max(end, pkt->pts + std::max<int64_t>(pkt->duration, 0));
    }
    av_packet_unref(pkt.get());
  }
  return end;
}

[[noreturn]] void fail(const std::string& what, int err, const std::string& where) {
  throw_data(what + ": " + av_error_text(err), where,
             "check disk space and that both videos were written completely");
}

}  // namespace

double video_stream_duration(const std::string& path) {
  FormatInputPtr in = open_input(path);
  int idx = find_video_stream(in.get(), path);
  AVRational tb = in->streams[idx]->time_base;
  return double(stream_end_ticks(in.get(), idx)) * tb.num / tb.den;
}

VideoSpan append_video(const std::string& dest_path, const std::string& episode_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dest_path, ec)) {
    double duration = video_stream_duration(episode_path);
    fs::copy_file(episode_path, dest_path, fs::copy_options::overwrite_existing, ec);
    if (ec) throw_data("cannot copy episode video: " + ec.message(), dest_path);
    return VideoSpan{0.0, duration};
  }
  FormatInputPtr a = open_input(dest_path);
  FormatInputPtr b = open_input(episode_path);
  const int ia = find_video_stream(a.get(), dest_path);
  const int ib = find_video_stream(b.get(), episode_path);
  AVStream* sa = a->streams[ia];
  AVStream* sb = b->streams[ib];
  const AVCodecParameters* pa = sa->codecpar;
  const AVCodecParameters* pb = sb->codecpar;
  if (pa->codec_id != pb->codec_id || pa->width != pb->width || pa->height != pb->height ||
      av_cmp_q(sa->avg_frame_rate, sb->avg_frame_rate) != 0) {
    throw_data(std::string("cannot append: episode video is ") + avcodec_get_name(pb->codec_id) +
                   " " + std::to_string(pb->width) + "x" + std::to_string(pb->height) +
                   " but the destination is " + avcodec_get_name(pa->codec_id) + " " +
                   std::to_string(pa->width) + "x" + std::to_string(pa->height) +
                   " (or their frame rates differ)",
               episode_path, "encode every episode of a camera with the same settings");
  }

  const std::string tmp_path = dest_path + ".append.tmp.mp4";
  TempFileGuard guard{tmp_path};  // declared first: removes the file after `oc` closes it
  OutputCloser oc;
  int err = avformat_alloc_output_context2(&oc.out, nullptr, "mp4", tmp_path.c_str());
  if (err < 0 || !oc.out) fail("cannot create the mp4 muxer", err, tmp_path);
  AVStream* so = avformat_new_stream(oc.out, nullptr);
  err = avcodec_parameters_copy(so->codecpar, pa);
  if (err < 0) fail("cannot copy stream parameters", err, dest_path);
  so->codecpar->codec_tag = 0;
  so->time_base = sa->time_base;
  so->avg_frame_rate = sa->avg_frame_rate;
  err = avio_open(&oc.out->pb, tmp_path.c_str(), AVIO_FLAG_WRITE);
  if (err < 0) fail("cannot create the temporary file", err, tmp_path);
  AVDictionary* mux = nullptr;
  av_dict_set(&mux, "movflags", "faststart", 0);
  err = avformat_write_header(oc.out, &mux);
  av_dict_free(&mux);
  if (err < 0) fail("cannot write the mp4 header", err, tmp_path);
  const AVRational tb_out = so->time_base;  // the muxer may have changed it

  PacketPtr pkt(av_packet_alloc());
  int64_t end_out = 0;  // end of the destination's frames, in tb_out
  auto copy_all = [&](AVFormatContext* in, int index, AVRational tb_in, int64_t offset,
                      const std::string& where, bool track_end) {
    while ((err = av_read_frame(in, pkt.get())) >= 0) {
      if (pkt->stream_index != index) {
        av_packet_unref(pkt.get());
        continue;
      }
      av_packet_rescale_ts(pkt.get(), tb_in, tb_out);
      if (pkt->pts != AV_NOPTS_VALUE) {
        if (track_end) end_out = std::max(end_out, pkt->pts + std::max<int64_t>(pkt->duration, 0));
        pkt->pts += offset;
      }
      if (pkt->dts != AV_NOPTS_VALUE) pkt->dts += offset;
      pkt->stream_index = 0;
      pkt->pos = -1;
      err = av_interleaved_write_frame(oc.out, pkt.get());
      if (err < 0) fail("cannot write a packet", err, tmp_path);
    }
    if (err != AVERROR_EOF) fail("cannot read a packet", err, where);
  };
  copy_all(a.get(), ia, sa->time_base, 0, dest_path, true);
  const int64_t offset = end_out;
  // Episode duration: the end of its frames, measured in the output time base.
  int64_t episode_end = 0;
  {
    FormatInputPtr probe = open_input(episode_path);
    int64_t ticks = stream_end_ticks(probe.get(), ib);
    episode_end = av_rescale_q(ticks, sb->time_base, tb_out);
  }
  copy_all(b.get(), ib, sb->time_base, offset, episode_path, false);
  err = av_write_trailer(oc.out);
  if (err < 0) fail("cannot finish the mp4", err, tmp_path);
  avio_closep(&oc.out->pb);

  fs::rename(tmp_path, dest_path, ec);
  guard.keep = !ec;
  if (ec) throw_data("cannot replace the video: " + ec.message(), dest_path);
  const double tick = double(tb_out.num) / tb_out.den;
  return VideoSpan{double(offset) * tick, double(offset + episode_end) * tick};
}

}  // namespace lerobot
