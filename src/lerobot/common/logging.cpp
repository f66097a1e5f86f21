// Logging sink: one mutex-guarded write per line so lines from threads never interleave.
#include "lerobot/common/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace lerobot {
namespace {
std::atomic<int> g_rank{0};
std::atomic<int> g_world{1};
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_mutex;

const char* level_tag(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}
}  // namespace

void set_log_rank(int rank, int world_size) {
  g_rank = rank;
  // Under our own launcher every line is already prefixed "[rank R]" by the parent.
  const char* launcher = std::getenv("LEROBOT_LAUNCHER");
  g_world = (launcher && std::string(launcher) == "lerobot-cpp") ? 1 : world_size;
}
void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log_line(LogLevel level, const std::string& message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
  std::string prefix = std::string(level_tag(level)) + " " + stamp + " ";
  if (g_world.load() > 1) prefix += "[rank " + std::to_string(g_rank.load()) + "] ";
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(stderr, "%s%s\n", prefix.c_str(), message.c_str());
  std::fflush(stderr);
}

}  // namespace lerobot
