// ProgressBar: rate measured since construction (excluding resumed steps), ETA from the rate.
#include "lerobot/common/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lerobot {

std::string format_hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>((s / 60) % 60), static_cast<long long>(s % 60));
  return buf;
}

std::string render_progress(int64_t current, int64_t total, double per_s, const std::string& unit) {
  const int width = static_cast<int>(std::to_string(total).size());
  const int pct = total > 0 ? static_cast<int>(100 * current / total) : 0;
  const double eta = per_s > 0 ? static_cast<double>(total - current) / per_s : -1.0;
  char buf[200];
  std::snprintf(buf, sizeof(buf), "[ %*lld/%lld %3d%% | %.1f %s/s | ETA %s ]", width,
                static_cast<long long>(current), static_cast<long long>(total), pct, per_s, unit.c_str(),
                format_hms(eta).c_str());
  return buf;
}

ProgressDisplay resolve_progress_display(ProgressDisplay requested) {
  if (const char* env = std::getenv("LEROBOT_PROGRESS")) {
    if (std::strcmp(env, "bar") == 0) return ProgressDisplay::kBar;
    if (std::strcmp(env, "lines") == 0) return ProgressDisplay::kLines;
    if (std::strcmp(env, "off") == 0) return ProgressDisplay::kOff;
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (requested == ProgressDisplay::kAuto) return tty ? ProgressDisplay::kBar : ProgressDisplay::kLines;
  if (requested == ProgressDisplay::kTerminalOnly) return tty ? ProgressDisplay::kBar : ProgressDisplay::kOff;
  return requested;
}

ProgressBar::ProgressBar(int64_t total, int64_t initial, ProgressDisplay display, std::string label, std::string unit)
    : total_(total), initial_(initial), current_(initial), display_(resolve_progress_display(display)),
      label_(std::move(label)), unit_(std::move(unit)), start_(Clock::now()), last_draw_(start_) {}

ProgressBar::ProgressBar(int64_t total, int64_t initial, bool enabled)
    : ProgressBar(total, initial, enabled ? ProgressDisplay::kBar : ProgressDisplay::kOff) {}

ProgressBar::~ProgressBar() {
  if (display_ == ProgressDisplay::kBar && drawn_ && !finished_) std::fputc('\n', stderr);
}

double ProgressBar::rate() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  return elapsed > 0 ? static_cast<double>(current_ - initial_) / elapsed : 0.0;
}

void ProgressBar::draw() {
  if (display_ == ProgressDisplay::kBar && !finished_) draw_now();
}

void ProgressBar::draw_now() {
  const std::string prefix = label_.empty() ? "" : label_ + " ";
  std::fprintf(stderr, "\r%s%s", prefix.c_str(), render_progress(current_, total_, rate(), unit_).c_str());
  std::fflush(stderr);
  drawn_ = true;
  last_draw_ = Clock::now();
}

void ProgressBar::print_line() {
  const std::string prefix = label_.empty() ? "progress" : label_;
  std::fprintf(stderr, "%s: %s\n", prefix.c_str(), render_progress(current_, total_, rate(), unit_).c_str());
  std::fflush(stderr);
  printed_ = current_;
}

void ProgressBar::update(int64_t current) {
  current_ = current;
  if (finished_) return;
  if (display_ == ProgressDisplay::kLines) {
    const int64_t tenth = total_ > 0 ? 10 * current_ / total_ : 10;
    if (tenth > last_tenth_ && current_ > initial_) {
      last_tenth_ = tenth;
      print_line();
    }
    return;
  }
  if (display_ != ProgressDisplay::kBar) return;
  if (!drawn_ || current_ >= total_ || Clock::now() - last_draw_ >= std::chrono::milliseconds(200)) draw_now();
}

void ProgressBar::clear() {
  if (display_ != ProgressDisplay::kBar || !drawn_ || finished_) return;
  std::fputs("\r\033[2K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressBar::finish() {
  if (finished_) return;
  if (display_ == ProgressDisplay::kBar) {
    draw_now();
    std::fputc('\n', stderr);
  } else if (display_ == ProgressDisplay::kLines && printed_ != current_) {
    print_line();
  }
  finished_ = true;
}

}  // namespace lerobot
