// The W&B sidecar process (see wandb_sidecar.h). posix_spawn, not fork: the trainer has LibTorch
// and loader threads running.
#include "lerobot/train/metrics/wandb_sidecar.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"

extern char** environ;

namespace lerobot {
namespace {

constexpr const char* kSidecarName = "lerobot-cpp-wandb";

bool executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), R_OK) == 0;
}

// Spawns argv with fd 0 = stdin_fd (or inherited when -1) and fds 1, 2 = out_fd (or inherited).
pid_t spawn(const std::vector<std::string>& argv, int stdin_fd, int out_fd, int* err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  *err = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return *err == 0 ? pid : -1;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

fs::path find_wandb_sidecar() {
  if (const char* env = std::getenv("LEROBOT_CPP_WANDB"); env && *env) {
    if (executable_file(env)) return env;
    throw_usage(std::string("LEROBOT_CPP_WANDB names no readable file: ") + env, "LEROBOT_CPP_WANDB",
                "point it at lerobot-cpp-wandb (installed beside lerobot-cpp) or unset it");
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && executable_file(exe.parent_path() / kSidecarName)) return exe.parent_path() / kSidecarName;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && executable_file(fs::path(d) / kSidecarName)) return fs::path(d) / kSidecarName;
  }
  throw_usage(std::string("cannot find ") + kSidecarName + " (the W&B sidecar script) beside " +
                  (ec ? std::string("the executable") : exe.string()) + " or on PATH",
              "--wandb.enable", "install lerobot.cpp (cmake --install) or set LEROBOT_CPP_WANDB=/path/to/lerobot-cpp-wandb");
}

std::string wandb_python() {
  const char* env = std::getenv("LEROBOT_CPP_PYTHON");
  return env && *env ? env : "python3";
}

void check_wandb_ready(const WandBConfig& cfg) {
  const fs::path script = find_wandb_sidecar();
  const std::string python = wandb_python();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_runtime("pipe failed: " + std::string(std::strerror(errno)));
  int err = 0;
  const pid_t pid = spawn({python, script.string(), "--check", "--mode=" + cfg.mode.value_or("online")}, -1, fds[1], &err);
  ::close(fds[1]);
  std::string out;
  if (pid > 0) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fds[0]);
  if (pid < 0)
    throw_usage("W&B logging needs Python with the wandb package, and '" + python + "' cannot be run (" +
                    std::strerror(err) + ")",
                "--wandb.enable", "install Python 3 and `pip install wandb`, or set LEROBOT_CPP_PYTHON=/path/to/python");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) return;
  out = trim(out);
  if (code == 3) {  // the script's own verdict: problem on the first line, the fix on the second
    const size_t nl = out.find('\n');
    throw_usage(out.substr(0, nl), "--wandb.enable", nl == std::string::npos ? "" : out.substr(nl + 1));
  }
  if (out.size() > 2000) out = "..." + out.substr(out.size() - 2000);
  throw_usage("checking the W&B client with " + python + " " + script.string() + " failed (exit " +
                  std::to_string(code) + "): " + out,
              "--wandb.enable", "fix the Python environment above, or drop --wandb.enable");
}

WandBSidecar::WandBSidecar(const fs::path& spec_file) {
  const fs::path script = find_wandb_sidecar();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_runtime("pipe failed: " + std::string(std::strerror(errno)));
  int err = 0;
  pid_ = spawn({wandb_python(), script.string(), "--spec=" + spec_file.string()}, fds[0], -1, &err);
  ::close(fds[0]);
  if (pid_ < 0) {
    ::close(fds[1]);
    throw_usage("cannot start the W&B sidecar with " + wandb_python() + ": " + std::strerror(err), "--wandb.enable",
                "set LEROBOT_CPP_PYTHON=/path/to/python (with wandb installed)");
  }
  pipe_fd_ = fds[1];
  LOG_INFO << "W&B: logging through " << script.string() << " (pid " << pid_ << "), fed by the metrics file";
}

WandBSidecar::~WandBSidecar() {
  if (pipe_fd_ >= 0) ::close(pipe_fd_);
  if (!exited_ && pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) exited_ = true;  // else it finishes on its own
  }
}

void WandBSidecar::reap(int status) {
  exited_ = true;
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok || pipe_fd_ >= 0) {
    std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                        : "was killed by signal " + std::to_string(WTERMSIG(status));
    LOG_WARNING << "the W&B sidecar (pid " << pid_ << ") " << how
                << (pipe_fd_ >= 0 ? " during training: training goes on; W&B gets no more metrics, "
                                    "train_metrics.jsonl and tensorboard/ stay complete"
                                  : " while finishing the W&B run");
  }
}

bool WandBSidecar::alive() {
  if (exited_ || pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) reap(status);
  return !exited_;
}

void WandBSidecar::finish(double timeout_s) {
  alive();  // a death during training is reported as such
  if (pipe_fd_ >= 0) ::close(pipe_fd_);
  pipe_fd_ = -1;
  if (exited_ || pid_ <= 0) return;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  bool told = false;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reap(status);
      return;
    }
    if (!told && std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) {  // say so when it is slow
      LOG_INFO << "W&B: waiting for the sidecar to finish the run (pid " << pid_ << ")";
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  LOG_WARNING << "the W&B sidecar (pid " << pid_ << ") is still finishing the run after " << timeout_s
              << " s; it goes on by itself";
}

}  // namespace lerobot
