#include "support/run_command.h"

#include <sys/wait.h>

#include <cstdio>

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

}  // namespace lerobot::testing
