// Logging: timestamped lines to stderr, prefixed "[rank R]" when the job has several processes.
#pragma once

#include <sstream>
#include <string>

namespace lerobot {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Set once at start-up by the distributed layer; rank prefixes appear only when world_size > 1.
void set_log_rank(int rank, int world_size);
void set_log_level(LogLevel level);
LogLevel log_level();
void log_line(LogLevel level, const std::string& message);

namespace detail {
class LogStream {
 public:
  explicit LogStream(LogLevel level) : level_(level) {}
  ~LogStream() { log_line(level_, stream_.str()); }
  template <class T>
  LogStream& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
// Lets the logging macro be one expression (no dangling else inside an unbraced if).
struct Voidify {
  void operator&(const LogStream&) {}
};
}  // namespace detail

// LOG_INFO << "loaded " << n << " episodes";
#define LEROBOT_LOG(level)                                                    \
  (::lerobot::LogLevel::level < ::lerobot::log_level())                      \
      ? (void)0                                                               \
      : ::lerobot::detail::Voidify() & ::lerobot::detail::LogStream(::lerobot::LogLevel::level)
#define LOG_DEBUG LEROBOT_LOG(kDebug)
#define LOG_INFO LEROBOT_LOG(kInfo)
#define LOG_WARNING LEROBOT_LOG(kWarning)
#define LOG_ERROR LEROBOT_LOG(kError)

}  // namespace lerobot
