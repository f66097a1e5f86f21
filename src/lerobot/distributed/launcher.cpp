// launch_local: fork/exec one child per local rank, prefix their output, stop all on a failure.
#include "lerobot/distributed/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/common/thread_scheduling.h"
#include "lerobot/distributed/launch_env.h"

namespace lerobot {
namespace {

struct Child {
  int rank = 0;
  pid_t pid = -1;
  bool alive = false;
  int status = 0;
};

struct Stream {
  int fd;
  int out_fd;  // 1 or 2
  std::string prefix;
  std::string pending;
};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Copies child output line by line with its rank prefix until every pipe is closed or `stop`.
void pump(std::vector<Stream> streams, const std::atomic<int64_t>* deadline_ns) {
  char buf[8192];
  auto flush_lines = [](Stream& s, bool all) {
    size_t nl;
    while ((nl = s.pending.find('\n')) != std::string::npos) {
      write_all(s.out_fd, s.prefix + s.pending.substr(0, nl + 1));
      s.pending.erase(0, nl + 1);
    }
    if (all && !s.pending.empty()) {
      write_all(s.out_fd, s.prefix + s.pending + "\n");
      s.pending.clear();
    }
  };
  while (!streams.empty()) {
    std::vector<pollfd> fds;
    for (auto& s : streams) fds.push_back({s.fd, POLLIN, 0});
    int r = ::poll(fds.data(), fds.size(), 100);
    if (r < 0 && errno != EINTR) break;
    int64_t deadline = deadline_ns->load();
    if (deadline > 0 && std::chrono::steady_clock::now().time_since_epoch().count() > deadline)
      break;
    if (r <= 0) continue;
    for (size_t i = fds.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(streams[i].fd, buf, sizeof(buf));
      if (n > 0) {
        streams[i].pending.append(buf, static_cast<size_t>(n));
        flush_lines(streams[i], false);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        flush_lines(streams[i], true);
        ::close(streams[i].fd);
        streams.erase(streams.begin() + static_cast<long>(i));
      }
    }
  }
  for (auto& s : streams) {
    flush_lines(s, true);
    ::close(s.fd);
  }
}

std::string describe_status(int rank, int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "rank " + std::to_string(rank) + " was killed by signal " + std::to_string(sig) + " (" +
           (name ? name : "?") + ")";
  }
  return "rank " + std::to_string(rank) + " exited with status " +
         std::to_string(WEXITSTATUS(status));
}

bool failed(int status) {
  return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw_runtime("cannot resolve /proc/self/exe", "launcher");
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

int find_free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw_runtime("cannot open a socket to find a free port", "launcher");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw_runtime("cannot find a free TCP port", "launcher", "pass --main_process_port");
  }
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

LaunchResult launch_local(const std::vector<std::string>& argv, const LocalLaunchOptions& o) {
  if (o.num_processes < 1) throw_usage("num_processes must be >= 1", "--num_processes");
  if (o.num_machines < 1 || o.machine_rank < 0 || o.machine_rank >= o.num_machines)
    throw_usage("machine_rank " + std::to_string(o.machine_rank) + " is outside [0, " +
                    std::to_string(o.num_machines) + ")",
                "--machine_rank");
  if (o.main_process_port == 0 && o.num_machines > 1)
    throw_usage("a multi-machine launch needs an explicit port", "--main_process_port",
                "pass the same --main_process_port on every machine");
  if (argv.empty()) throw_usage("launch_local needs at least argv[0]", "launcher");
  const std::string exe = o.executable.empty() ? self_exe() : o.executable;
  const int port = o.main_process_port ? o.main_process_port : find_free_port();
  const int world = o.num_processes * o.num_machines;

  EnvMap base = process_env();
  base.erase("TORCHELASTIC_USE_AGENT_STORE");
  if (!base.count("OMP_NUM_THREADS")) {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    base["OMP_NUM_THREADS"] = std::to_string(std::max(1u, cores / static_cast<unsigned>(o.num_processes)));
  }
  base["WORLD_SIZE"] = std::to_string(world);
  base["LOCAL_WORLD_SIZE"] = std::to_string(o.num_processes);
  base["GROUP_RANK"] = std::to_string(o.machine_rank);
  base["GROUP_WORLD_SIZE"] = std::to_string(o.num_machines);
  base["MASTER_ADDR"] = o.main_process_ip;
  base["MASTER_PORT"] = std::to_string(port);
  base["LEROBOT_LAUNCHER"] = "lerobot-cpp";
  for (const auto& kv : o.extra_env) base[kv.first] = kv.second;

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  std::vector<Child> children;
  std::vector<Stream> streams;
  const pid_t parent = ::getpid();
  for (int local = 0; local < o.num_processes; ++local) {
    const int rank = o.machine_rank * o.num_processes + local;
    EnvMap env = base;
    env["RANK"] = std::to_string(rank);
    env["LOCAL_RANK"] = std::to_string(local);
    std::vector<std::string> kv;
    for (const auto& e : env) kv.push_back(e.first + "=" + e.second);
    std::vector<char*> envp;
    for (auto& s : kv) envp.push_back(const_cast<char*>(s.c_str()));
    envp.push_back(nullptr);

    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw_runtime("cannot create pipes for the child processes", "launcher");
    pid_t pid = ::fork();
    if (pid < 0) throw_runtime("fork failed", "launcher");
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      drop_acquired_realtime_scheduling();  // a rank never inherits a library's real-time policy
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execve(exe.c_str(), cargv.data(), envp.data());
      const char msg[] = "launcher: execve failed\n";
      ssize_t ignored = ::write(2, msg, sizeof(msg) - 1);
      (void)ignored;
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    std::string prefix = "[rank " + std::to_string(rank) + "] ";
    streams.push_back({out[0], 1, prefix, {}});
    streams.push_back({err[0], 2, prefix, {}});
    children.push_back({rank, pid, true, 0});
  }

  std::atomic<int64_t> pump_deadline{0};
  std::thread reader(pump, std::move(streams), &pump_deadline);

  LaunchResult result;
  using clock = std::chrono::steady_clock;
  bool terminating = false;
  clock::time_point kill_at;
  bool killed = false;
  std::vector<int> stopped;
  size_t alive = children.size();
  while (alive > 0) {
    for (auto& c : children) {
      if (!c.alive) continue;
      int status = 0;
      pid_t r = ::waitpid(c.pid, &status, WNOHANG);
      if (r != c.pid) continue;
      c.alive = false;
      c.status = status;
      --alive;
      if (failed(status) && result.failed_rank < 0 && !terminating) {
        result.failed_rank = c.rank;
        result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        result.message = describe_status(c.rank, status);
        terminating = true;
        kill_at = clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.kill_grace_s * 1000));
        for (auto& other : children)
          if (other.alive) {
            ::kill(other.pid, SIGTERM);
            stopped.push_back(other.rank);
          }
      }
    }
    if (terminating && !killed && clock::now() >= kill_at) {
      for (auto& c : children)
        if (c.alive) ::kill(c.pid, SIGKILL);
      killed = true;
    }
    if (alive > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Let the pipes drain (a grandchild may keep one open: give up after a moment).
  pump_deadline = (clock::now() + std::chrono::seconds(1)).time_since_epoch().count();
  reader.join();
  if (result.failed_rank >= 0 && !stopped.empty()) {
    result.message += "; stopped the other rank(s):";
    for (int r : stopped) result.message += " " + std::to_string(r);
  }
  return result;
}

}  // namespace lerobot
