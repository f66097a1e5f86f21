// Running commands from tests: a shell command line or the built `lerobot-cpp`, its stdout and
// stderr captured together. Linked into every test binary (cmake/LerobotTargets.cmake).
#pragma once

#include <string>

namespace lerobot::testing {

struct CommandResult {
  int code = -1;    // exit status, or 128 + signal number when a signal ended it
  std::string out;  // stdout and stderr, interleaved as written
};

// Runs `command` through /bin/sh with stderr folded into stdout.
CommandResult run_command(const std::string& command);

// Runs a shell command line; *output is replaced by its stdout+stderr; returns its exit code.
int run_shell(const std::string& command, std::string* output);

// Runs `lerobot-cpp ARGS` (the binary of this build) the same way.
int run_cli(const std::string& args, std::string* output);

// The first of $LEROBOT_CPP_PYTHON, python3 on PATH and /usr/bin/python3 that imports numpy and
// torch (a GPU machine's venv Python has torch and may lack numpy, the system one may lack both; on
// Debian the system one has them and a PATH shim may not). Falls back to /usr/bin/python3, whose
// own error then names what is missing.
const std::string& python_with_numpy_and_torch();

// Runs python_with_numpy_and_torch() -c CODE (CODE without single quotes) and returns its stdout;
// throws std::runtime_error with the output when it fails.
std::string run_python(const std::string& code);

}  // namespace lerobot::testing
