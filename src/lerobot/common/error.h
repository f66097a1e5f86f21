// lerobot::Error: the one exception type the library throws. It carries what went wrong, where
// (a file, flag, key or tensor name) and what the user can do about it. Only apps/ catches it.
#pragma once

#include <stdexcept>
#include <string>

namespace lerobot {

// Kinds map to process exit codes in apps/ (see apps/lerobot-cpp/main.cpp).
enum class ErrorKind {
  kUsage = 2,       // a bad flag, config key or value
  kData = 3,        // a dataset, video, parquet or safetensors file is missing or malformed
  kCheckpoint = 4,  // a checkpoint cannot be read or does not fit this policy
  kRuntime = 5,     // a failure while running (non-finite loss, a dead rank, a timeout)
  kInternal = 70,   // a broken invariant inside lerobot.cpp
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string what, std::string where = {}, std::string fix = {});

  ErrorKind kind() const { return kind_; }
  const std::string& problem() const { return problem_; }
  const std::string& where() const { return where_; }
  const std::string& fix() const { return fix_; }

 private:
  ErrorKind kind_;
  std::string problem_;
  std::string where_;
  std::string fix_;
};

// Shorthands: throw_usage("unknown flag", "--policy.chunck_size", "did you mean --policy.chunk_size?")
[[noreturn]] void throw_usage(std::string what, std::string where = {}, std::string fix = {});
[[noreturn]] void throw_data(std::string what, std::string where = {}, std::string fix = {});
[[noreturn]] void throw_checkpoint(std::string what, std::string where = {}, std::string fix = {});
[[noreturn]] void throw_runtime(std::string what, std::string where = {}, std::string fix = {});

// LEROBOT_CHECK(cond, "message"): an internal invariant; failing it is a bug in lerobot.cpp.
#define LEROBOT_CHECK(cond, msg)                                                              \
  do {                                                                                        \
    if (!(cond))                                                                              \
      throw ::lerobot::Error(::lerobot::ErrorKind::kInternal, std::string("check failed: ") + \
                                 #cond + ": " + (msg),                                        \
                             std::string(__FILE__) + ":" + std::to_string(__LINE__),         \
                             "please report this as a bug");                                  \
  } while (0)

}  // namespace lerobot
