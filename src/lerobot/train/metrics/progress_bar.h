// A one-line training progress bar with rate and ETA, redrawn with \r on a terminal only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace lerobot {

// "[ 1234/20000   6% | 12.3 it/s | ETA 00:25:31 ]"
std::string render_progress(int64_t current, int64_t total, double it_per_s);
// "HH:MM:SS" (hours grow past 99 if needed); "--:--:--" for a non-finite or negative value.
std::string format_hms(double seconds);

class ProgressBar {
 public:
  // enabled defaults to "stderr is a TTY"; a disabled bar prints nothing.
  ProgressBar(int64_t total, int64_t initial = 0);
  ProgressBar(int64_t total, int64_t initial, bool enabled);
  ~ProgressBar();

  // Sets the position; redraws at most every 0.2 s (and always at the end).
  void update(int64_t current);
  // Erases the bar so a log line can be printed; the next update() redraws it.
  void clear();
  // Redraws now (e.g. after clear() and a log line); nothing when disabled or finished.
  void draw();
  // Draws the final state and ends the line.
  void finish();
  bool enabled() const { return enabled_; }

 private:
  using Clock = std::chrono::steady_clock;
  void draw_now();
  int64_t total_, initial_, current_;
  bool enabled_;
  bool drawn_ = false;
  bool finished_ = false;
  Clock::time_point start_, last_draw_;
};

}  // namespace lerobot
