// ProgressBar: rate measured since construction (excluding resumed steps), ETA from the rate.
#include "lerobot/train/metrics/progress_bar.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace lerobot {

std::string format_hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>((s / 60) % 60), static_cast<long long>(s % 60));
  return buf;
}

std::string render_progress(int64_t current, int64_t total, double it_per_s) {
  const int width = static_cast<int>(std::to_string(total).size());
  const int pct = total > 0 ? static_cast<int>(100 * current / total) : 0;
  const double eta = it_per_s > 0 ? static_cast<double>(total - current) / it_per_s : -1.0;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "[ %*lld/%lld %3d%% | %.1f it/s | ETA %s ]", width,
                static_cast<long long>(current), static_cast<long long>(total), pct, it_per_s,
                format_hms(eta).c_str());
  return buf;
}

ProgressBar::ProgressBar(int64_t total, int64_t initial)
    : ProgressBar(total, initial, isatty(STDERR_FILENO) != 0) {}

ProgressBar::ProgressBar(int64_t total, int64_t initial, bool enabled)
    : total_(total), initial_(initial), current_(initial), enabled_(enabled), start_(Clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_ && !finished_) std::fputc('\n', stderr);
}

void ProgressBar::draw() {
  if (enabled_ && !finished_) draw_now();
}

void ProgressBar::draw_now() {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(current_ - initial_) / elapsed : 0.0;
  std::fprintf(stderr, "\r%s", render_progress(current_, total_, rate).c_str());
  std::fflush(stderr);
  drawn_ = true;
  last_draw_ = Clock::now();
}

void ProgressBar::update(int64_t current) {
  current_ = current;
  if (!enabled_ || finished_) return;
  if (!drawn_ || current_ >= total_ || Clock::now() - last_draw_ >= std::chrono::milliseconds(200)) draw_now();
}

void ProgressBar::clear() {
  if (!enabled_ || !drawn_ || finished_) return;
  std::fputs("\r\033[2K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  draw_now();
  std::fputc('\n', stderr);
  finished_ = true;
}

}  // namespace lerobot
