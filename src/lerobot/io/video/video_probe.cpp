// probe_video: reads stream parameters with libavformat; counts packets when nb_frames is unset.
#include "lerobot/io/video/video_probe.h"

#include "lerobot/io/video/ffmpeg_util.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace lerobot {

using namespace video_detail;

VideoInfo probe_video(const std::string& path) {
  FormatInputPtr fmt = open_input(path);
  const int idx = find_video_stream(fmt.get(), path);
  const AVStream* st = fmt->streams[idx];
  const AVCodecParameters* par = st->codecpar;
  VideoInfo info;
  info.codec = avcodec_get_name(par->codec_id);
  info.width = par->width;
  info.height = par->height;
  AVRational rate = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
  if (rate.den) {
    info.fps = av_q2d(rate);
    info.fps_num = rate.num;
    info.fps_den = rate.den;
  }
  const char* pix = av_get_pix_fmt_name(AVPixelFormat(par->format));
  info.pix_fmt = pix ? pix : "";
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(AVPixelFormat(par->format));
  info.channels = desc ? std::min(3, int(desc->nb_components)) : 3;
  info.full_range = par->color_range == AVCOL_RANGE_JPEG || info.pix_fmt.rfind("yuvj", 0) == 0;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) info.has_audio = true;
  }
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0) {
    info.duration_s = double(st->duration) * st->time_base.num / st->time_base.den;
  } else if (fmt->duration != AV_NOPTS_VALUE) {
    info.duration_s = double(fmt->duration) / AV_TIME_BASE;
  }
  info.num_frames = st->nb_frames;
  if (info.num_frames <= 0) {
    PacketPtr pkt(av_packet_alloc());
    int64_t n = 0;
    while (av_read_frame(fmt.get(), pkt.get()) >= 0) {
      if (pkt->stream_index == idx) ++n;
      av_packet_unref(pkt.get());
    }
    info.num_frames = n;
  }
  return info;
}

}  // namespace lerobot
