// Progress of long work (training steps, eval episodes, dataset checks) with rate and ETA.
// On a terminal: one bar redrawn with \r. Elsewhere (a log file, a pipe): a line at every tenth of
// the work, so long jobs under nohup or a scheduler still show how far they are.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace lerobot {

// "[ 1234/20000   6% | 12.3 it/s | ETA 00:25:31 ]"
std::string render_progress(int64_t current, int64_t total, double per_s, const std::string& unit = "it");
// "HH:MM:SS" (hours grow past 99 if needed); "--:--:--" for a non-finite or negative value.
std::string format_hms(double seconds);

enum class ProgressDisplay {
  kAuto,          // a bar on a terminal, lines otherwise
  kTerminalOnly,  // a bar on a terminal, nothing otherwise (training: its log lines already say it)
  kBar,
  kLines,
  kOff,
};
// LEROBOT_PROGRESS=bar|lines|off overrides `requested` (an unknown value is ignored); then kAuto and
// kTerminalOnly are resolved against whether stderr is a terminal.
ProgressDisplay resolve_progress_display(ProgressDisplay requested);

class ProgressBar {
 public:
  // `label` prefixes lines ("eval: ..."); `unit` names what is counted ("it", "episodes", "files").
  ProgressBar(int64_t total, int64_t initial = 0, ProgressDisplay display = ProgressDisplay::kTerminalOnly,
              std::string label = "", std::string unit = "it");
  // Kept for callers that only choose on/off: enabled = a bar, disabled = nothing.
  ProgressBar(int64_t total, int64_t initial, bool enabled);
  ~ProgressBar();

  // Sets the position; a bar redraws at most every 0.2 s, lines print at each tenth (and the end).
  void update(int64_t current);
  // Erases the bar so a log line can be printed; the next update() redraws it.
  void clear();
  // Redraws the bar now (e.g. after clear() and a log line); nothing for lines or when finished.
  void draw();
  // Shows the final state and ends the line.
  void finish();
  bool enabled() const { return display_ != ProgressDisplay::kOff; }
  ProgressDisplay display() const { return display_; }

 private:
  using Clock = std::chrono::steady_clock;
  double rate() const;
  void draw_now();
  void print_line();
  int64_t total_, initial_, current_;
  ProgressDisplay display_;
  std::string label_, unit_;
  bool drawn_ = false;
  bool finished_ = false;
  int64_t last_tenth_ = -1;
  int64_t printed_ = -1;  // the position the last line showed
  Clock::time_point start_, last_draw_;
};

}  // namespace lerobot
