// Internal FFmpeg helpers for io/video: opening inputs with errors that name the file.
#include "lerobot/io/video/ffmpeg_util.h"

#include <filesystem>
#include <mutex>

#include "lerobot/common/error.h"

namespace lerobot::video_detail {

void init_ffmpeg_logging() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_ERROR); });
}

FormatInputPtr open_input(const std::string& path) {
  init_ffmpeg_logging();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_data("video file not found", path, "check the dataset's videos/ folder and video_path");
  }
  AVFormatContext* raw = nullptr;
  int err = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (err < 0) {
    throw_data("cannot open video: " + av_error_text(err), path,
               "the file may be truncated or not an mp4; re-encode or re-download it");
  }
  FormatInputPtr fmt(raw);
  err = avformat_find_stream_info(fmt.get(), nullptr);
  if (err < 0) {
    throw_data("cannot read video stream info: " + av_error_text(err), path,
               "the file may be truncated; re-encode or re-download it");
  }
  return fmt;
}

int find_video_stream(AVFormatContext* fmt, const std::string& path) {
  int idx = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (idx < 0) throw_data("file has no video stream", path, "check that this is a camera mp4");
  return idx;
}

}  // namespace lerobot::video_detail
