#include "support/run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace lerobot::testing {

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = ::popen(("(" + command + ") 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  return r;
}

int run_shell(const std::string& command, std::string* output) {
  CommandResult r = run_command(command);
  *output = std::move(r.out);
  return r.code;
}

int run_cli(const std::string& args, std::string* output) {
  return run_shell(std::string(LEROBOT_CLI) + " " + args, output);
}

const std::string& python_with_numpy_and_torch() {
  static const std::string chosen = [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("LEROBOT_CPP_PYTHON"); env && *env) candidates.emplace_back(env);
    candidates.insert(candidates.end(), {"python3", "/usr/bin/python3"});
    for (const auto& c : candidates)
      if (std::system((c + " -c 'import numpy, torch' >/dev/null 2>&1").c_str()) == 0) return c;
    return std::string("/usr/bin/python3");
  }();
  return chosen;
}

std::string run_python(const std::string& code) {
  if (code.find('\'') != std::string::npos) throw std::invalid_argument("run_python: the code may not hold a single quote");
  const CommandResult r = run_command(python_with_numpy_and_torch() + " -c '" + code + "'");
  if (r.code != 0) throw std::runtime_error("python3 failed: " + r.out);
  return r.out;
}

}  // namespace lerobot::testing
