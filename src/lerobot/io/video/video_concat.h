// append_video: concatenates an episode mp4 onto a dataset video by stream copy (no re-encode).
#pragma once

#include <string>

namespace lerobot {

// Where an appended episode lives in the destination file (seconds, file timeline).
struct VideoSpan {
  double from_timestamp = 0.0;  // duration of the destination before appending
  double to_timestamp = 0.0;    // from_timestamp + the episode's duration (n_frames / fps)
};

// Appends the video stream of `episode_path` to `dest_path` by remuxing both into a temporary
// mp4 (movflags=faststart) that then replaces `dest_path`, like LeRobot's ffconcat stream copy.
// The episode's packets are shifted by the destination's duration, so frame k of the episode is
// at from_timestamp + k/fps. If `dest_path` does not exist it becomes a copy of the episode
// (from_timestamp 0). Both files must share codec, size and frame rate (else lerobot::Error).
// `episode_path` is left in place; the caller deletes it.
VideoSpan append_video(const std::string& dest_path, const std::string& episode_path);

// Duration of the video stream of `path` in seconds: the end of its last frame
// (max pts + duration over all packets), i.e. n_frames / fps for LeRobot files.
double video_stream_duration(const std::string& path);

}  // namespace lerobot
